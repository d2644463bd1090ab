import type BetterSqlite3 from 'better-sqlite3';
import type { FlowStore } from '../../domain/login-flows/flow-store.js';
import type { RateLimitCount, RateLimitHit } from '../../domain/rate-limit/rate-limit-store.js';
import type { Store } from '../../domain/store.js';
import { whenNotBusy } from './busy.js';
import { translateSqliteError } from './errors.js';

export type UnsyncedWrites = Pick<Store, 'hitRateLimit' | 'hitRateLimits' | 'insertFlow'>;

/**
 * rate-limits.ts's upsert as one statement prepared once, rather than a Kysely build and
 * compile per hit; bound as (key, end of a new window, now, now, end of a new window). The
 * store contract suite holds both to the same answers.
 */
const HIT_SQL = `INSERT INTO rate_limits (key, count, reset_at) VALUES (?, 1, ?)
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN rate_limits.reset_at <= ? THEN 1 ELSE rate_limits.count + 1 END,
    reset_at = CASE WHEN rate_limits.reset_at <= ? THEN excluded.reset_at ELSE rate_limits.reset_at END
  RETURNING count, reset_at`;

type FlowRow = Parameters<FlowStore['insertFlow']>[0];
const FLOW_COLUMNS = Object.keys({
  id: true,
  csrf_token: true,
  return_to: true,
  state: true,
  failed_attempts: true,
  identity_id: true,
  first_method: true,
  issued_at: true,
  expires_at: true,
  token_format: true,
} satisfies Record<keyof FlowRow, true>) as (keyof FlowRow)[];
const INSERT_FLOW_SQL = `INSERT INTO flows (${FLOW_COLUMNS.join(', ')}) VALUES (${FLOW_COLUMNS.map(() => '?').join(', ')})`;

export interface UnsyncedWriteOptions {
  raw: BetterSqlite3.Database;
  /** The Kysely store: used while one of its transactions holds the connection. */
  fallback: Store;
  timeoutMs: number;
}

/**
 * Writes that no one misses after a power cut, answered without waiting for the WAL sync
 * that SERVICE_SQLITE_SYNCHRONOUS=full gives every other commit (wal-sync.ts): rate-limit
 * counters and new login flows (docs/sqlite.md). Losing the last counter increments or
 * unfinished flows in an OS crash gives no one a session and undoes no revocation; the
 * next synced commit makes them durable anyway (an fsync of the WAL covers every frame
 * before it).
 *
 * They run on the raw connection, outside Kysely, so no sync is awaited for them. While a
 * Kysely transaction is open the write joins the queue through Kysely instead, as the
 * prepared reads do (and is then synced like any Kysely commit).
 */
export function sqliteUnsyncedWrites(options: UnsyncedWriteOptions): UnsyncedWrites {
  const { raw, fallback, timeoutMs } = options;
  // Prepared on first use: the tables exist only once the store has been migrated.
  let prepared: { hit: BetterSqlite3.Statement; insertFlow: BetterSqlite3.Statement } | undefined;
  const statements = () =>
    (prepared ??= { hit: raw.prepare(HIT_SQL), insertFlow: raw.prepare(INSERT_FLOW_SQL) });

  const hit = (key: string, windowMs: number, now: number): RateLimitHit =>
    statements().hit.get(key, now + windowMs, now, now) as RateLimitHit;
  const hitAll = raw.transaction((counts: readonly RateLimitCount[], now: number) => {
    const hits: RateLimitHit[] = [];
    for (const { key, windowMs, limit } of counts) {
      const counted = hit(key, windowMs, now);
      hits.push(counted);
      if (counted.count > limit) break;
    }
    return hits;
  });

  function write<R>(direct: () => R, viaKysely: () => Promise<R>): Promise<R> {
    const attempt = () => (raw.inTransaction ? viaKysely() : direct());
    return whenNotBusy(attempt, timeoutMs).catch((error: unknown) => {
      throw translateSqliteError(error);
    });
  }

  return {
    hitRateLimit(key, windowMs, now) {
      return write(
        () => hit(key, windowMs, now),
        () => fallback.hitRateLimit(key, windowMs, now),
      );
    },
    hitRateLimits(counts, now) {
      return write(
        () => hitAll.immediate(counts, now),
        () => fallback.hitRateLimits(counts, now),
      );
    },
    insertFlow(record) {
      return write(
        () => {
          statements().insertFlow.run(FLOW_COLUMNS.map((column) => record[column]));
        },
        () => fallback.insertFlow(record),
      );
    },
  };
}
