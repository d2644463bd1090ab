import { validationError } from '../errors.js';
import { requireListLimit } from '../list-limit.js';
import { type AuditEntry, type AuditFilter, type AuditStore, toAuditEntry } from './audit.js';

export interface AuditQueryInput {
  limit?: number;
  actions?: string[];
  /** ISO 8601 instants: since inclusive, until exclusive. */
  since?: string;
  until?: string;
}

const ACTION_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** A date, or a date and time with seconds optional, fraction optional, zone required. */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * Strict on purpose: `Date.parse` also accepts "March 7" and local times, which would make
 * a filter silently mean another instant. A date alone is midnight UTC.
 */
export function parseInstant(field: string, raw: string): number {
  const match = ISO_INSTANT.exec(raw);
  // dayExists: Date.parse rolls 2026-02-30 over into March instead of refusing it.
  if (match && dayExists(match)) {
    const ms = Date.parse(match[4] === undefined ? `${raw}T00:00:00Z` : raw);
    if (!Number.isNaN(ms)) return ms;
  }
  throw validationError(
    `${field} must be an ISO 8601 date (2026-01-31) or date and time with a zone (2026-01-31T09:30:00Z)`,
  );
}

function dayExists(match: RegExpExecArray): boolean {
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export interface AuditQuery {
  limit: number;
  filter: AuditFilter;
}

export function parseAuditQuery(input: AuditQueryInput): AuditQuery {
  const limit = requireListLimit(input.limit);
  const filter: AuditFilter = {};
  if (input.actions?.length) {
    const bad = input.actions.find((action) => !ACTION_PATTERN.test(action));
    if (bad !== undefined) {
      throw validationError('action must be 1-64 characters of a-z, 0-9 and "_"');
    }
    filter.actions = [...new Set(input.actions)];
  }
  if (input.since !== undefined) filter.since = parseInstant('since', input.since);
  if (input.until !== undefined) filter.until = parseInstant('until', input.until);
  if (filter.since !== undefined && filter.until !== undefined && filter.since >= filter.until) {
    throw validationError('since must be before until');
  }
  return { limit, filter };
}

/** Newest first. Reading the log writes no audit row of its own. */
export async function listAuditEntries(
  store: Pick<AuditStore, 'listAuditRecords'>,
  { limit, filter }: AuditQuery,
): Promise<AuditEntry[]> {
  return (await store.listAuditRecords(limit, filter)).map(toAuditEntry);
}
