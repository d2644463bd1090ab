import type BetterSqlite3 from 'better-sqlite3';
import type { RateLimitCount, RateLimitHit } from '../../domain/rate-limit/rate-limit-store.js';
import type { Store } from '../../domain/store.js';
import { FLOW_COLUMNS, hitRateLimitArgs, signInSql } from '../queries/sign-in-sql.js';
import { type RawStatementOptions, rawWriter } from './raw-write.js';

export type UnsyncedWrites = Pick<Store, 'hitRateLimit' | 'hitRateLimits' | 'insertFlow'>;

const SQL = signInSql(() => '?');

/** A raw writer's options, without the WAL sync these writes never wait for. */
export type UnsyncedWriteOptions = Omit<RawStatementOptions, 'durable'>;

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
    (prepared ??= {
      hit: raw.prepare(SQL.hitRateLimit),
      insertFlow: raw.prepare(SQL.insertFlow),
    });

  const hit = (key: string, windowMs: number, now: number): RateLimitHit =>
    statements().hit.get(hitRateLimitArgs(key, windowMs, now)) as RateLimitHit;
  const hitAll = raw.transaction((counts: readonly RateLimitCount[], now: number) => {
    const hits: RateLimitHit[] = [];
    for (const { key, windowMs, limit } of counts) {
      const counted = hit(key, windowMs, now);
      hits.push(counted);
      if (counted.count > limit) break;
    }
    return hits;
  });

  // Answered without awaiting the WAL sync: that is the point of this module.
  const write = rawWriter(raw, timeoutMs, undefined);

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
