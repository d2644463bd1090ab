import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DomainError } from '../../domain/errors.js';
import type { MailCodeRecord } from '../../domain/mail-codes/mail-code.js';
import { mailCodeViewState } from '../../domain/mail-codes/mail-codes.js';
import { ERROR_STATUS, handleError, refusalOf } from '../errors.js';
import { sendPage } from '../login-page/respond.js';
import { messagePage } from '../login-page/render.js';
import { verificationPage } from './render.js';

/** A sentence for a failure after which the code form is still usable. */
function formMessage(error: DomainError): string {
  switch (error.code) {
    case 'invalid_credentials':
      return 'That code is not right. Check the mail and try again.';
    case 'rate_limited':
      return `Too many attempts. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
    case 'email_taken':
      return 'This address now belongs to another account, so it cannot be yours.';
    case 'validation_error':
      return 'Enter the code from the mail.';
    default:
      return 'That did not work. Try again.';
  }
}

/** Title and sentence once the code cannot be used any more. */
function deadEnd(error: DomainError, record: MailCodeRecord | undefined, now: number) {
  if (error.code === 'forbidden') {
    return ['Request refused', 'This form was sent from another site, so it was refused.'];
  }
  if (error.code === 'not_found' || !record) {
    return ['Not found', 'This confirmation does not exist. Ask for a new code from your account.'];
  }
  switch (mailCodeViewState(record, now)) {
    case 'used':
      return ['Already confirmed', 'This code has already been used.'];
    case 'superseded':
      return ['Code replaced', 'A newer code was sent: use the latest mail.'];
    case 'failed':
      return ['Too many attempts', 'Too many wrong codes. Ask for a new code from your account.'];
    case 'expired':
      return ['Code expired', 'This code has expired. Send a new one from your account.'];
  }
  return ['Confirmation failed', 'This form is out of date. Reload the page.'];
}

export interface VerificationFailure {
  record?: MailCodeRecord;
  /** The poster knew the flow's CSRF token and the code is still open: show the form again. */
  formUsable: boolean;
  returnTo: string | null;
  now: number;
}

/**
 * A form post's failure as a page, with the error model's status: the form again with the
 * message while it can still be used, else a short explanation.
 */
export function sendVerificationFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  thrown: unknown,
  context: VerificationFailure,
): FastifyReply | Promise<FastifyReply> {
  const error = refusalOf(thrown);
  if (!error) return handleError(thrown, request, reply);
  request.errorCode = error.code;
  if (error.code === 'rate_limited' && error.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(error.retryAfterSeconds));
  }
  const status = ERROR_STATUS[error.code];
  const { record } = context;
  if (
    record &&
    context.formUsable &&
    error.code !== 'invalid_token' &&
    error.code !== 'forbidden'
  ) {
    const page = verificationPage({
      record,
      returnTo: context.returnTo,
      error: formMessage(error),
    });
    return sendPage(reply, status, page);
  }
  const [title, message] = deadEnd(error, record, context.now);
  return sendPage(reply, status, messagePage({ title: title!, message: message! }));
}
