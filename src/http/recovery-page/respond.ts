import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DomainError } from '../../domain/errors.js';
import { type RecoveryFlowRecord, recoveryViewState } from '../../domain/recovery/recovery-flow.js';
import { ERROR_STATUS, handleError, refusalOf } from '../errors.js';
import { sendPage } from '../login-page/respond.js';
import { messagePage } from '../login-page/render.js';
import { RECOVERY_PATH } from './render.js';

/** A sentence for a failure after which the step's form is still usable. */
export function recoveryFormMessage(error: DomainError): string {
  switch (error.code) {
    case 'invalid_credentials':
      return 'That code is not right. Check the mail (or your app) and try again.';
    case 'rate_limited':
      return `Too many attempts. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
    case 'validation_error':
      return error.hasClientMessage ? error.message : 'Check what you entered.';
    case 'forbidden':
      return 'Your account has two-step sign-in: enter the code from your app or a recovery code.';
    default:
      return 'That did not work. Try again.';
  }
}

/** Title and sentence once the flow cannot be used any more. */
function deadEnd(error: DomainError, flow: RecoveryFlowRecord | undefined, now: number) {
  if (error.code === 'identity_disabled') {
    return ['Account disabled', 'This account is disabled: ask your administrator.'];
  }
  if (error.code === 'not_found' || !flow) {
    return ['Not found', 'This recovery does not exist. Start again.'];
  }
  if (error.code === 'forbidden' && error.reason === undefined && !error.hasClientMessage) {
    return ['Request refused', 'This form was sent from another site, so it was refused.'];
  }
  switch (recoveryViewState(flow, now)) {
    case 'completed':
      return ['Already used', 'This recovery was already used to set a new password.'];
    case 'failed':
      return ['Too many attempts', 'Too many wrong codes. Start again.'];
    case 'expired':
      return ['Code expired', 'This recovery has expired. Start again.'];
  }
  return [
    'Recovery failed',
    'This code can no longer be used (a newer mail was sent, or the account changed). Start again.',
  ];
}

/**
 * A failure as a page, with the error model's status: `form` (the step to show again with
 * the message) while it can still be used, else a short explanation and a fresh start.
 */
export function sendRecoveryFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  thrown: unknown,
  context: {
    flow?: RecoveryFlowRecord;
    now: number;
    form?: (message: string) => string;
    /** Where the re-shown form may land (CSP form-action). */
    landing?: string[];
  },
): FastifyReply | Promise<FastifyReply> {
  const error = refusalOf(thrown);
  if (!error) return handleError(thrown, request, reply);
  request.errorCode = error.code;
  if (error.code === 'rate_limited' && error.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(error.retryAfterSeconds));
  }
  const status = ERROR_STATUS[error.code];
  const usable =
    error.code !== 'invalid_token' &&
    error.code !== 'not_found' &&
    error.code !== 'identity_disabled';
  if (context.form && usable && !(error.code === 'forbidden' && !error.hasClientMessage)) {
    return sendPage(reply, status, context.form(recoveryFormMessage(error)), context.landing);
  }
  const [title, message] = deadEnd(error, context.flow, context.now);
  const restart = context.flow?.return_to
    ? `${RECOVERY_PATH}?return_to=${encodeURIComponent(context.flow.return_to)}`
    : RECOVERY_PATH;
  return sendPage(
    reply,
    status,
    messagePage({ title: title!, message: message!, restartUrl: restart }),
  );
}
