import { UniqueViolation } from '../domain/unique-violation.js';

/** The domain's class, for the adapters that translate into it. */
export { UniqueViolation };

/**
 * The only storage failures the domain ever sees. Adapters translate driver errors
 * (Postgres SQLSTATEs, SQLite result codes, socket errors) into these, so no driver
 * message reaches a response.
 */
export class StorageUnavailable extends Error {
  /** `message` may name the endpoint and cause for operators; it never reaches a client. */
  constructor(
    override readonly cause: unknown,
    message = 'database unavailable',
  ) {
    super(message);
    this.name = 'StorageUnavailable';
  }
}

export class StorageTimeout extends Error {
  constructor(
    override readonly cause: unknown,
    message = 'database query timed out',
  ) {
    super(message);
    this.name = 'StorageTimeout';
  }
}

export function isStorageError(error: unknown): boolean {
  return (
    error instanceof UniqueViolation ||
    error instanceof StorageUnavailable ||
    error instanceof StorageTimeout
  );
}
