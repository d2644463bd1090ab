import type { AuditEntry } from '../../domain/audit/audit.js';
import type { Identity } from '../../domain/identities/identity.js';
import { escapeHtml } from '../login-page/render.js';
import { auditTable } from './audit-table.js';
import { listUrl, pager } from './identities-page.js';
import { ADMIN_PATHS, consolePage, notices } from './render.js';

/** The filters of the audit page, in the order of its form. */
export const AUDIT_FILTERS = [
  ['action', 'Action', 'identity_disable'],
  ['actor', 'Actor', 'cli, admin, browser, a token name or an id'],
  ['identity', 'Identity', 'id or username'],
  ['outcome', 'Outcome', 'ok, or an error code'],
  ['since', 'Since', '2026-01-31 or 2026-01-31T09:30:00Z'],
  ['until', 'Until', '2026-02-01'],
] as const;

export type AuditFilterName = (typeof AUDIT_FILTERS)[number][0];

export interface AuditPageInput {
  operator: Identity;
  query: Partial<Record<AuditFilterName, string>>;
  entries: AuditEntry[];
  page: number;
  hasNext: boolean;
  error?: string;
}

export function auditPage(input: AuditPageInput): string {
  const fields = AUDIT_FILTERS.map(
    ([name, label, hint]) => `<div><label for="${name}">${label}</label>
<input id="${name}" name="${name}" type="text" value="${escapeHtml(input.query[name] ?? '')}" placeholder="${escapeHtml(hint)}" autocapitalize="none" spellcheck="false"></div>`,
  ).join('\n');
  const csv = listUrl(ADMIN_PATHS.auditCsv, input.query, 1);
  return consolePage(
    input.operator,
    'audit',
    'Audit log',
    `${notices({ error: input.error })}<form class="filters" method="get" action="${ADMIN_PATHS.audit}" role="search">
${fields}
<div><button type="submit">Filter</button></div>
</form>
<p><a href="${escapeHtml(csv)}" id="export-csv" download>Export these events as CSV</a> <span class="muted">(the newest 10,000 that match)</span></p>
${auditTable(input.entries, `Page ${input.page}, newest first`)}
${pager(ADMIN_PATHS.audit, input.query, input.page, input.hasNext)}`,
  );
}
