import type { Identity } from '../../domain/identities/identity.js';
import { escapeHtml } from '../login-page/render.js';
import { ADMIN_PATHS, consolePage, notices, when } from './render.js';

export interface IdentitiesPageInput {
  operator: Identity;
  /** The filters as typed, to show them again. */
  query: { q?: string; state?: string };
  identities: Identity[];
  page: number;
  hasNext: boolean;
  error?: string;
}

/** `?q=…&state=…&page=n`, keeping only the filters that are set. */
export function listUrl(path: string, query: Record<string, string | undefined>, page: number) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  if (page > 1) params.set('page', String(page));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** Previous and next links of a paged list. */
export function pager(
  path: string,
  query: Record<string, string | undefined>,
  page: number,
  hasNext: boolean,
): string {
  const links = [
    page > 1
      ? `<a href="${escapeHtml(listUrl(path, query, page - 1))}" rel="prev">Previous page</a>`
      : '',
    hasNext
      ? `<a href="${escapeHtml(listUrl(path, query, page + 1))}" rel="next">Next page</a>`
      : '',
  ].filter(Boolean);
  return links.length ? `<nav class="pages" aria-label="Pages">${links.join('')}</nav>` : '';
}

function stateOption(value: string, label: string, selected: string | undefined): string {
  return `<option value="${value}"${selected === value ? ' selected' : ''}>${label}</option>`;
}

export function identitiesPage(input: IdentitiesPageInput): string {
  const { q = '', state } = input.query;
  const rows = input.identities
    .map(
      (identity) => `<tr>
<td><a href="${escapeHtml(ADMIN_PATHS.identity(identity.id))}">${escapeHtml(identity.username)}</a></td>
<td>${escapeHtml(identity.display_name)}</td>
<td>${escapeHtml(identity.state)}</td>
<td>${when(identity.created_at)}</td>
<td><code>${escapeHtml(identity.id)}</code></td>
</tr>`,
    )
    .join('\n');
  const table = input.identities.length
    ? `<table>
<caption class="muted">Page ${input.page}, newest first</caption>
<thead><tr><th scope="col">Username</th><th scope="col">Display name</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Id</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
    : '<p class="muted" id="no-results">No identity matches.</p>';
  return consolePage(
    input.operator,
    'identities',
    'Identities',
    `${notices({ error: input.error })}<form class="filters" method="get" action="${ADMIN_PATHS.identities}" role="search">
<div><label for="q">Username or id</label>
<input id="q" name="q" type="search" value="${escapeHtml(q)}" autocapitalize="none" spellcheck="false"></div>
<div><label for="state">State</label>
<select id="state" name="state">${stateOption('', 'Any', state ?? '')}${stateOption('active', 'Active', state)}${stateOption('disabled', 'Disabled', state)}</select></div>
<div><button type="submit">Search</button></div>
</form>
${table}
${pager(ADMIN_PATHS.identities, { q, state }, input.page, input.hasNext)}`,
  );
}
