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
 * Every code of the document's `Error.error` enum. `satisfies` makes `npm run typecheck`
 * fail, naming the code, when the enum and this list part.
 */
const ERROR_CODES = {
  invalid_service_token: true,
  missing_service_token: true,
  invalid_credentials: true,
  session_expired: true,
  invalid_token: true,
  identity_disabled: true,
  forbidden: true,
  not_found: true,
  username_taken: true,
  email_taken: true,
  validation_error: true,
  rate_limited: true,
  unavailable: true,
  timeout: true,
  bad_request: true,
  request_timeout: true,
  internal_error: true,
} as const satisfies Record<ErrorCode, true>;

/**
 * The error for an answer outside 2xx. A body that is not Tessera's error model (a proxy's
 * page, or JSON such as a gateway's `{"error":"Service Unavailable"}` whose `error` is no
 * documented code) is reported by its status: 503 as `unavailable`, 504 as `timeout`,
 * anything else as `internal_error`, with the status kept. So `code` is always one of the
 * documented codes.
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
  if (typeof body !== 'object' || body === null) return false;
  const { error, message, retry_after: retryAfter } = body as Record<string, unknown>;
  return (
    typeof error === 'string' &&
    Object.hasOwn(ERROR_CODES, error) &&
    (message === undefined || typeof message === 'string') &&
    (retryAfter === undefined || (typeof retryAfter === 'number' && retryAfter >= 0))
  );
}
