import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../domain/errors.js';
import { OUTAGE_MESSAGES } from '../service-log.js';
import { StorageTimeout, StorageUnavailable } from '../storage/errors.js';

/** The single error-code -> HTTP status table (docs/errors.md). */
export const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_service_token: 401,
  missing_service_token: 401,
  invalid_credentials: 401,
  session_expired: 401,
  invalid_token: 401,
  identity_disabled: 403,
  forbidden: 403,
  not_found: 404,
  username_taken: 409,
  email_taken: 409,
  validation_error: 422,
  rate_limited: 429,
  unavailable: 503,
  timeout: 504,
};

export interface ErrorBody {
  /**
   * A code of the table above; `internal_error` for a bug (500); `bad_request` (400) and
   * `request_timeout` (408) only from the transport, before any route (client-errors.ts).
   */
  error: ErrorCode | 'internal_error' | 'bad_request' | 'request_timeout';
  message?: string;
  retry_after?: number;
}

export function errorBody(error: DomainError): ErrorBody {
  const body: ErrorBody = { error: error.code };
  // A forbidden with a message tells the client what to do (send a second factor, sign in
  // again); the grant and Origin refusals carry none and stay `{error}` alone.
  if ((error.code === 'validation_error' || error.code === 'forbidden') && error.hasClientMessage) {
    body.message = error.message;
  }
  if (error.code === 'rate_limited' && error.retryAfterSeconds !== undefined) {
    body.retry_after = error.retryAfterSeconds;
  }
  return body;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The error code this request was answered with, for the audit row. */
    errorCode: string | null;
  }
}

/** Turns whatever was thrown into the flat error model; never a stack trace or driver text. */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (error instanceof StorageUnavailable) return new DomainError('unavailable');
  if (error instanceof StorageTimeout) return new DomainError('timeout');
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.validation) {
    return new DomainError('validation_error', describeValidation(fastifyError));
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new DomainError('validation_error', 'request body exceeds 64 KiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('validation_error', 'content type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DomainError('validation_error', 'request body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new DomainError('validation_error', 'request body is not valid JSON');
  }
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) {
    return new DomainError('validation_error', 'request body could not be parsed');
  }
  if (fastifyError.statusCode === 413 || fastifyError.statusCode === 415) {
    return new DomainError('validation_error', fastifyError.message ?? 'invalid request');
  }
  if (fastifyError.statusCode === 404) return new DomainError('not_found');
  throw error;
}

/**
 * What was thrown, as a refusal of the error model; undefined for anything else (a bug),
 * which handleError answers with a logged 500.
 */
export function refusalOf(thrown: unknown): DomainError | undefined {
  try {
    return toDomainError(thrown);
  } catch {
    return undefined;
  }
}

function describeValidation(error: Partial<FastifyError>): string {
  const first = error.validation?.[0];
  if (!first) return 'invalid request';
  const where = error.validationContext ?? 'body';
  const path = first.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : '';
  if (first.keyword === 'required') {
    return `${where}: missing required field ${(first.params as { missingProperty?: string }).missingProperty}`;
  }
  if (first.keyword === 'additionalProperties') {
    return `${where}: unknown field ${(first.params as { additionalProperty?: string }).additionalProperty}`;
  }
  return `${where}${path ? `.${path}` : ''} ${first.message ?? 'is invalid'}`;
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: DomainError,
): FastifyReply {
  request.errorCode = error.code;
  if (error.code === 'rate_limited' && error.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(error.retryAfterSeconds));
  }
  return reply.code(ERROR_STATUS[error.code]).type('application/json').send(errorBody(error));
}

/** Fastify's error handler: known failures become the error model, the rest a bare 500. */
export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const domainError = refusalOf(error);
  if (!domainError) {
    request.log.error({ err: error }, 'unhandled error');
    request.errorCode = 'internal_error';
    return reply.code(500).type('application/json').send({ error: 'internal_error' });
  }
  if (domainError.code === 'unavailable' || domainError.code === 'timeout') {
    request.log.warn({ err: error }, OUTAGE_MESSAGES[domainError.code]);
  }
  return sendError(request, reply, domainError);
}
