import type { AuditEntry } from '../../domain/audit/audit.js';
import { escapeHtml } from '../login-page/render.js';
import { ADMIN_PATHS, when } from './render.js';

/** Who did it: the service, with an operator's username or the actor id. */
export function actorOf(entry: AuditEntry): string {
  const name = entry.service_name ?? '-';
  const operator = entry.details.operator;
  if (typeof operator === 'string') return `${name}: ${operator}`;
  return entry.service_id ? `${name} (${entry.service_id})` : name;
}

/** Audit entries as a table, newest first; details as their JSON text. */
export function auditTable(entries: AuditEntry[], caption: string): string {
  if (entries.length === 0) return '<p class="muted" id="no-events">No audit events.</p>';
  const rows = entries
    .map(
      (entry) => `<tr>
<td>${when(entry.timestamp)}</td>
<td>${escapeHtml(entry.action)}</td>
<td>${escapeHtml(actorOf(entry))}</td>
<td>${entry.target_identity ? `<a href="${escapeHtml(ADMIN_PATHS.identity(entry.target_identity))}"><code>${escapeHtml(entry.target_identity)}</code></a>` : '-'}</td>
<td>${escapeHtml(entry.outcome)}</td>
<td class="details">${escapeHtml(JSON.stringify(entry.details))}</td>
</tr>`,
    )
    .join('\n');
  return `<table class="audit">
<caption class="muted">${escapeHtml(caption)}</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Identity</th><th scope="col">Outcome</th><th scope="col">Details</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
}
