import { pgDriver } from './driver.js';
import { StorageTimeout, StorageUnavailable, UniqueViolation } from '../errors.js';

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
};

/** Why no connection could be had, in words an operator acts on; never a credential. */
export function connectFailureMessage(endpoint: string, error: unknown): string {
  if (error instanceof pgDriver().DatabaseError) {
    // The server answered: not accepting connections (55000), too many connections
    // (53300), starting up or shutting down (57P03), authentication, unknown database.
    const refused = `PostgreSQL at ${endpoint} refused the connection: ${error.message} (SQLSTATE ${error.code})`;
    // 3D000 invalid_catalog_name: the database of SERVICE_DATABASE_URL does not exist.
    return error.code === '3D000'
      ? `${refused}; create it (createdb) or correct SERVICE_DATABASE_URL`
      : refused;
  }
  return `cannot reach PostgreSQL at ${endpoint}: ${unreachableReason(error)}`;
}

function unreachableReason(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code in UNREACHABLE) return UNREACHABLE[code]!;
  if (error instanceof AggregateError && error.errors.length > 0) {
    // Node tries every address of a name (IPv6 and IPv4) and reports them together.
    return unreachableReason(error.errors[0]);
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * SQLSTATEs meaning "cannot serve now", answered 503 so that clients retry: 25006 a
 * read-only transaction (a standby, or default_transaction_read_only), 25P03 the
 * idle-in-transaction backstop ended the session, 58000/58030 system and I/O errors.
 * Whole classes below: 08 connection exceptions, 53 insufficient resources (too many
 * connections, out of memory, disk full), 57 operator intervention (admin shutdown,
 * crash shutdown, cannot connect now, database dropped) except 57014.
 */
const UNAVAILABLE_STATES = new Set(['25006', '25P03', '58000', '58030']);
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57']);
/** 57014: statement_timeout cancelled the statement; 55P03: lock_timeout, if set. */
const TIMEOUT_STATES = new Set(['57014', '55P03']);

/**
 * A server error to a storage error, by SQLSTATE. Failures without one (connect, read
 * timeout, lost connection) are labelled where they happen, in pool.ts.
 */
export function translatePostgresError(error: unknown): unknown {
  if (!(error instanceof pgDriver().DatabaseError)) return error;
  const code = error.code ?? '';
  if (code === '23505') return new UniqueViolation(error);
  if (TIMEOUT_STATES.has(code)) return new StorageTimeout(error);
  if (UNAVAILABLE_STATES.has(code) || UNAVAILABLE_CLASSES.has(code.slice(0, 2))) {
    return new StorageUnavailable(error);
  }
  return error;
}
