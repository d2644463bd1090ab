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
  | 'email_taken'
  | 'validation_error'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout';

/**
 * Which refusal of its code an error is, where a page words them apart (a missing field
 * against an unreadable form, say). Internal: never sent, so the contract's codes stay the
 * only thing a client matches on, and no page matches on message text.
 */
export type RefusalReason =
  | 'missing_credentials'
  | 'return_to_not_allowed'
  | 'recent_sign_in_required'
  /** A credential change from an aal1 session of an identity with a second factor or passkey. */
  | 'second_factor_sign_in_required'
  /** An email code submission without its address or code. */
  | 'missing_code'
  /** An email code request without the address to mail. */
  | 'missing_address'
  /** A right sign-in of an identity whose address is unverified, when verified ones are required. */
  | 'email_verification_required';

export interface DomainErrorDetails {
  /** `rate_limited`: seconds until the window resets (Retry-After). */
  retryAfterSeconds?: number;
  reason?: RefusalReason;
}

export class DomainError extends Error {
  readonly retryAfterSeconds?: number;
  readonly reason?: RefusalReason;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    details: DomainErrorDetails = {},
  ) {
    super(message ?? code);
    this.name = 'DomainError';
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.reason = details.reason;
  }

  /** Only validation errors (and forbidden, naming the grant) carry a message to the client. */
  get hasClientMessage(): boolean {
    return this.message !== this.code;
  }
}

export const validationError = (message: string, reason?: RefusalReason) =>
  new DomainError('validation_error', message, { reason });
export const notFound = () => new DomainError('not_found');
