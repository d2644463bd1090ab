import { StorageTimeout, StorageUnavailable, UniqueViolation } from '../errors.js';

/** SQLite result codes (better-sqlite3 puts them in `code`) to storage errors. */
export function translateSqliteError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return new UniqueViolation(error);
  }
  // Another process held the write lock for longer than busy_timeout.
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new StorageTimeout(error);
  }
  if (
    code.startsWith('SQLITE_IOERR') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code === 'SQLITE_FULL' ||
    code === 'SQLITE_READONLY'
  ) {
    return new StorageUnavailable(error);
  }
  return error;
}
