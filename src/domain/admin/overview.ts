import { SIGN_IN_METHOD_IDS } from '../sign-in/methods.js';
import { RECOVERY_SIGN_IN } from '../sessions/session.js';
import type { Store } from '../store.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** How many days of new identities the overview charts. */
export const NEW_IDENTITY_DAYS = 30;

/** One bar of a chart: the bucket's start (epoch ms) and its counts. */
export interface SignInBucket {
  start: number;
  ok: number;
  failed: number;
}

export interface SignInSeries {
  /** Oldest first, one per hour, the current (partial) hour last; empty hours are zeros. */
  buckets: SignInBucket[];
  /** Totals per method over the whole span, methods in a fixed order. */
  byMethod: { method: string; ok: number; failed: number }[];
}

export interface Overview {
  at: number;
  signIns24h: SignInSeries;
  signIns7d: SignInSeries;
  liveSessions: number;
  /** Oldest first, one per UTC day, today last. */
  newIdentities: { start: number; count: number }[];
}

/** The second-factor steps log their own method; they are counted beside the first factors. */
const METHODS = [...SIGN_IN_METHOD_IDS, RECOVERY_SIGN_IN, 'totp', 'recovery_code'];

async function signIns(store: Store, now: number, hours: number): Promise<SignInSeries> {
  const first = Math.floor(now / HOUR_MS) - hours + 1;
  const rows = await store.countSignIns(first * HOUR_MS, HOUR_MS, METHODS);
  const buckets = Array.from({ length: hours }, (_, i) => ({
    start: (first + i) * HOUR_MS,
    ok: 0,
    failed: 0,
  }));
  const totals = new Map<string, { ok: number; failed: number }>();
  for (const row of rows) {
    const bucket = buckets[row.bucket - first];
    if (bucket) bucket[row.result] += row.count;
    const total = totals.get(row.method) ?? { ok: 0, failed: 0 };
    total[row.result] += row.count;
    totals.set(row.method, total);
  }
  const byMethod = [...METHODS, 'other']
    .filter((method) => totals.has(method))
    .map((method) => ({ method, ...totals.get(method)! }));
  return { buckets, byMethod };
}

/**
 * The console's overview (docs/admin.md): sign-ins per hour over 24 hours and 7 days from
 * the audit log, live sessions, new identities per day. Counted by the database, so its
 * cost does not grow with the rows it reads into memory. Audit rows are buffered, so the
 * last second or so of sign-ins may be missing.
 */
export async function buildOverview(store: Store, now: number): Promise<Overview> {
  const firstDay = Math.floor(now / DAY_MS) - NEW_IDENTITY_DAYS + 1;
  const [signIns24h, signIns7d, liveSessions, identities] = await Promise.all([
    signIns(store, now, 24),
    signIns(store, now, 7 * 24),
    store.countLiveSessions(now),
    store.countNewIdentities(firstDay * DAY_MS, DAY_MS),
  ]);
  const newIdentities = Array.from({ length: NEW_IDENTITY_DAYS }, (_, i) => ({
    start: (firstDay + i) * DAY_MS,
    count: 0,
  }));
  for (const row of identities) {
    const day = newIdentities[row.bucket - firstDay];
    if (day) day.count += row.count;
  }
  return { at: now, signIns24h, signIns7d, liveSessions, newIdentities };
}
