import type { ErrorBody, ErrorCode } from './types.js';

/**
 * Every failure the client reports: a documented Tessera error code with the HTTP status.
 * Failures that never got an answer are reported with status 0: `timeout` when the client's
 * own deadline passed, `unavailable` when no connection could be made or it broke.
 */
export class TesseraError extends Error {
  override readonly name = 'TesseraError';

  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    /** `message` of a `validation_error`: which field, and what to do. */
    readonly detail?: string,
    /** Seconds, on `rate_limited`. */
    readonly retryAfter?: number,
    options?: { cause?: unknown },
  ) {
    super(detail ? `${code}: ${detail}` : `${code} (HTTP ${status})`, options);
  }

  /** Whether the same call may succeed later (the codes the client itself retries). */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

export const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'rate_limited',
  'unavailable',
  'timeout',
]);

export function isTesseraError(value: unknown): value is TesseraError {
  return value instanceof TesseraError;
}

/**
 * The error for an answer outside 2xx. A body that is not the error model (a proxy's page,
 * say) is reported by status: 503/504 as `unavailable`/`timeout`, anything else as
 * `internal_error`, so `code` is always one of the documented codes.
 */
export function errorFromAnswer(status: number, body: unknown): TesseraError {
  if (isErrorBody(body)) {
    return new TesseraError(body.error, status, body.message, body.retry_after);
  }
  const code: ErrorCode =
    status === 503 ? 'unavailable' : status === 504 ? 'timeout' : 'internal_error';
  return new TesseraError(code, status);
}

function isErrorBody(body: unknown): body is ErrorBody {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as { error?: unknown }).error === 'string'
  );
}
