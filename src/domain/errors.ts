/** The stable error codes of docs/errors.md; HTTP maps each to one status in http/errors.ts. */
export type ErrorCode =
  | 'invalid_service_token'
  | 'missing_service_token'
  | 'invalid_credentials'
  | 'session_expired'
  | 'invalid_token'
  | 'identity_disabled'
  | 'forbidden'
  | 'not_found'
  | 'username_taken'
  | 'validation_error'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout';

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message ?? code);
    this.name = 'DomainError';
  }

  /** Only validation errors (and forbidden, naming the grant) carry a message to the client. */
  get hasClientMessage(): boolean {
    return this.message !== this.code;
  }
}

export const validationError = (message: string) => new DomainError('validation_error', message);
export const notFound = () => new DomainError('not_found');
