import type BetterSqlite3 from 'better-sqlite3';
import type { Store } from '../../domain/store.js';
import { whenNotBusy } from './busy.js';
import { translateSqliteError } from './errors.js';

/** What a module of statements on the raw connection is built from (open.ts). */
export interface RawStatementOptions {
  raw: BetterSqlite3.Database;
  /** The Kysely store: used while one of its transactions holds the connection. */
  fallback: Store;
  timeoutMs: number;
  /** The WAL sync a commit awaits under SERVICE_SQLITE_SYNCHRONOUS=full (wal-sync.ts). */
  durable: (() => Promise<void>) | undefined;
}

/**
 * A write that commits on its own on the raw connection (`direct`), or through Kysely
 * (`viaKysely`) while one of its transactions holds the connection, where a direct write
 * would join that transaction. Decided at each attempt; while another process holds the
 * write lock the attempt waits on timers (busy.ts), never inside the call. With `durable`
 * (SERVICE_SQLITE_SYNCHRONOUS=full, wal-sync.ts) the caller is answered after the WAL
 * sync, as a Kysely commit is; without it, as soon as SQLite has the write.
 */
export function rawWriter(
  raw: BetterSqlite3.Database,
  timeoutMs: number,
  durable: (() => Promise<void>) | undefined,
) {
  return function write<R>(direct: () => R, viaKysely: () => Promise<R>): Promise<R> {
    const attempt = async () => {
      if (raw.inTransaction) return viaKysely();
      const result = direct();
      await durable?.();
      return result;
    };
    return whenNotBusy(attempt, timeoutMs).catch((error: unknown) => {
      throw translateSqliteError(error);
    });
  };
}

/**
 * A write that joins the Kysely transaction holding the connection (a transaction store's
 * override, open.ts): run directly on the raw connection, as part of that transaction, with
 * no build or compile per call. Outside any transaction the statement would autocommit
 * without waiting for its sync, so that is refused.
 */
export function inOpenTransaction<R>(raw: BetterSqlite3.Database, step: () => R): Promise<R> {
  if (!raw.inTransaction) {
    return Promise.reject(new Error('a transaction write ran outside its transaction'));
  }
  try {
    return Promise.resolve(step());
  } catch (error) {
    return Promise.reject(translateSqliteError(error));
  }
}
