import { parseInstant } from '../audit/audit-query.js';
import { validationError } from '../errors.js';
import type { IdentityState } from '../identities/identity.js';
import { normalizeUsername } from '../identities/identity.js';
import type { AuditSearch, IdentitySearch } from './admin-store.js';

/** Rows on one page of the console's lists. */
export const PAGE_SIZE = 50;
/** Rows in one CSV export: the newest this many that match. */
export const EXPORT_LIMIT = 10_000;
const MAX_PAGE = 1000;
const MAX_TEXT = 256;

/** The query string of a list page as the browser sends it: every field optional text. */
export type ListQueryInput = Record<string, string | undefined>;

/** Empty form fields mean "no filter": the browser sends every field of a GET form. */
function field(input: ListQueryInput, name: string): string | undefined {
  const value = input[name]?.trim();
  if (value === undefined || value === '') return undefined;
  if (value.length > MAX_TEXT)
    throw validationError(`${name} must be at most ${MAX_TEXT} characters`);
  return value;
}

export function parsePage(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 1;
  const page = Number(raw);
  if (!/^\d+$/.test(raw) || page < 1 || page > MAX_PAGE) {
    throw validationError(`page must be a whole number from 1 to ${MAX_PAGE}`);
  }
  return page;
}

const STATES: readonly IdentityState[] = ['active', 'disabled'];

/** `?q=&state=&page=`: one page more than shown is asked for, to know if a next one exists. */
export function parseIdentitySearch(input: ListQueryInput): IdentitySearch {
  const text = field(input, 'q');
  const state = field(input, 'state') as IdentityState | undefined;
  if (state !== undefined && !STATES.includes(state)) {
    throw validationError(`state must be one of: ${STATES.join(', ')}`);
  }
  const page = parsePage(input.page);
  return {
    ...(text === undefined ? {} : { text: normalizeUsername(text) }),
    ...(state === undefined ? {} : { state }),
    offset: (page - 1) * PAGE_SIZE,
    limit: PAGE_SIZE + 1,
  };
}

/**
 * `?action=&actor=&identity=&outcome=&since=&until=&page=`. The identity stays as typed
 * (an id or a username): the caller resolves it. `since`/`until` are ISO 8601, as for
 * `tessera audit list`.
 */
export function parseAuditSearch(
  input: ListQueryInput,
  { limit = PAGE_SIZE + 1 }: { limit?: number } = {},
): { search: AuditSearch; identity?: string } {
  const since = field(input, 'since');
  const until = field(input, 'until');
  const search: AuditSearch = {
    action: field(input, 'action'),
    actor: field(input, 'actor'),
    outcome: field(input, 'outcome'),
    since: since === undefined ? undefined : parseInstant('since', since),
    until: until === undefined ? undefined : parseInstant('until', until),
    offset: (parsePage(input.page) - 1) * PAGE_SIZE,
    limit,
  };
  if (search.since !== undefined && search.until !== undefined && search.since >= search.until) {
    throw validationError('since must be before until');
  }
  return { search, identity: field(input, 'identity') };
}
