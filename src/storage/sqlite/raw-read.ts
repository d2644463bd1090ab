import type BetterSqlite3 from 'better-sqlite3';
import { retryWhileBusy } from './busy.js';
import { translateSqliteError } from './errors.js';

/**
 * A read by key on the raw connection (`direct`), or through Kysely (`viaKysely`) while one
 * of its transactions holds the connection: a direct read would then see that
 * transaction's uncommitted rows. Decided at each attempt, since a retry after SQLITE_BUSY
 * (another process recovering the WAL) may find a transaction open; the waits are timers,
 * never inside the call.
 */
export function rawReader(raw: BetterSqlite3.Database, timeoutMs: number) {
  return function read<R>(
    direct: (key: string) => R,
    viaKysely: (key: string) => Promise<R>,
  ): (key: string) => Promise<R> {
    const attempt = (key: string) => (raw.inTransaction ? viaKysely(key) : direct(key));
    return async (key) => {
      try {
        return attempt(key);
      } catch (error) {
        return retryWhileBusy(error, () => attempt(key), timeoutMs).catch((last: unknown) => {
          throw translateSqliteError(last);
        });
      }
    };
  };
}
