import type BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery, Kysely } from 'kysely';
import type { Store } from '../../domain/store.js';
import { hitRateLimitQuery } from '../queries/rate-limits.js';
import type { Database } from '../schema.js';
import { whenNotBusy } from './busy.js';
import { translateSqliteError } from './errors.js';

export type UnsyncedWrites = Pick<Store, 'hitRateLimit' | 'insertFlow'>;

export interface UnsyncedWriteOptions {
  raw: BetterSqlite3.Database;
  db: Kysely<Database>;
  /** The Kysely store: used while one of its transactions holds the connection. */
  fallback: Store;
  prepare(sql: string): BetterSqlite3.Statement;
  timeoutMs: number;
  synchronous: 'normal' | 'full';
}

/**
 * Writes that no one misses after a power cut, committed without the WAL fsync that
 * SERVICE_SQLITE_SYNCHRONOUS=full gives every other commit: rate-limit counters and new
 * login flows (docs/sqlite.md). A flow login made five commits, each holding the server's
 * thread for an fsync; now only the one that mints the session syncs. Losing the last
 * counter increments or unfinished flows in an OS crash gives no one a session or undoes
 * no revocation; a later synced commit makes them durable anyway (an fsync of the WAL
 * covers every frame before it).
 *
 * `synchronous` is the connection's, set around one autocommit statement within one
 * synchronous call, so no other statement can commit under it. While a Kysely transaction
 * is open the write joins the queue through Kysely instead, as the prepared reads do.
 */
export function sqliteUnsyncedWrites(options: UnsyncedWriteOptions): UnsyncedWrites {
  const { raw, db, fallback, prepare, timeoutMs } = options;
  const relax = options.synchronous === 'full';

  function run<R>(query: CompiledQuery, step: (statement: BetterSqlite3.Statement) => R): R {
    const statement = prepare(query.sql);
    if (!relax) return step(statement);
    raw.exec('PRAGMA synchronous = NORMAL');
    try {
      return step(statement);
    } finally {
      raw.exec('PRAGMA synchronous = FULL');
    }
  }

  function write<R>(direct: () => R, viaKysely: () => Promise<R>): Promise<R> {
    const attempt = () => (raw.inTransaction ? viaKysely() : direct());
    return whenNotBusy(attempt, timeoutMs).catch((error: unknown) => {
      throw translateSqliteError(error);
    });
  }

  return {
    hitRateLimit(key, windowMs, now) {
      return write(
        () => {
          const query = hitRateLimitQuery(db, key, windowMs, now).compile();
          return run(query, (s) => s.get(query.parameters) as { count: number; reset_at: number });
        },
        () => fallback.hitRateLimit(key, windowMs, now),
      );
    },
    insertFlow(record) {
      return write(
        () => {
          const query = db.insertInto('flows').values(record).compile();
          run(query, (s) => s.run(query.parameters));
        },
        () => fallback.insertFlow(record),
      );
    },
  };
}
