/**
 * The only storage failures the domain ever sees. Adapters translate driver errors
 * (Postgres SQLSTATEs, SQLite result codes, socket errors) into these, so no driver
 * message reaches a response.
 */
export class UniqueViolation extends Error {
  constructor(override readonly cause: unknown) {
    super('unique constraint violated');
    this.name = 'UniqueViolation';
  }
}

export class StorageUnavailable extends Error {
  constructor(override readonly cause: unknown) {
    super('database unavailable');
    this.name = 'StorageUnavailable';
  }
}

export class StorageTimeout extends Error {
  constructor(override readonly cause: unknown) {
    super('database query timed out');
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
