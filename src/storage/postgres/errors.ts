import { StorageTimeout, StorageUnavailable, UniqueViolation } from '../errors.js';

const UNREACHABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** PostgreSQL SQLSTATEs, pg client failures and socket errors to storage errors. */
export function translatePostgresError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  if (code === '23505') return new UniqueViolation(error);
  // No connection within the timeout (a server that does not answer, or no free pooled
  // client): the database is unreachable, not a slow query.
  if (/connection timeout|timeout exceeded when trying to connect/i.test(error.message)) {
    return new StorageUnavailable(error);
  }
  // 57014: statement_timeout cancelled the query; the client-side timeout says so in words.
  if (code === '57014' || /timeout/i.test(error.message)) return new StorageTimeout(error);
  if (typeof code === 'string') {
    // 08: connection exceptions; 57P0x: server shutting down; 53300: too many connections.
    if (
      code.startsWith('08') ||
      code.startsWith('57P') ||
      code === '53300' ||
      UNREACHABLE_ERRNO.has(code)
    ) {
      return new StorageUnavailable(error);
    }
  }
  if (
    /Connection terminated|not queryable|Client has encountered a connection error/i.test(
      error.message,
    )
  ) {
    return new StorageUnavailable(error);
  }
  return error;
}
