import type BetterSqlite3 from 'better-sqlite3';
import { retryWhileBusy } from './busy.js';
import { translateSqliteError } from './errors.js';

/**
 * A read by key (or keys) on the raw connection (`direct`), or through Kysely
 * (`viaKysely`) while one of its transactions holds the connection: a direct read would
 * then see that transaction's uncommitted rows. Decided at each attempt, since a retry after SQLITE_BUSY
 * (another process recovering the WAL) may find a transaction open; the waits are timers,
 * never inside the call.
 */
export function rawReader(raw: BetterSqlite3.Database, timeoutMs: number) {
  return function read<A extends unknown[], R>(
    direct: (...args: A) => R,
    viaKysely: (...args: A) => Promise<R>,
  ): (...args: A) => Promise<R> {
    const attempt = (args: A) => (raw.inTransaction ? viaKysely(...args) : direct(...args));
    return async (...args) => {
      try {
        return attempt(args);
      } catch (error) {
        return retryWhileBusy(error, () => attempt(args), timeoutMs).catch((last: unknown) => {
          throw translateSqliteError(last);
        });
      }
    };
  };
}
