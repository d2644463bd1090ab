import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DomainError } from '../../domain/errors.js';
import { type FlowRecord, flowViewState } from '../../domain/login-flows/flow.js';
import type { SignedUp } from '../../domain/registration/sign-up.js';
import { setSessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, handleError, refusalOf } from '../errors.js';
import { messagePage, signedInPage } from '../login-page/render.js';
import { isFormPost, landingOrigins, sendPage } from '../login-page/respond.js';
import { verificationView } from '../routes/verification.js';
import { VERIFICATION_PATH } from '../verification-page/render.js';
import { type RegistrationFormInput, registrationPage, restartRegistrationUrl } from './render.js';

/** A sentence for a refusal after which the sign-up form is still usable. */
export function signUpMessage(error: DomainError): string {
  switch (error.code) {
    case 'username_taken':
      return 'This username is taken. Choose another one.';
    case 'email_taken':
      return 'This email address belongs to another account. Sign in instead, or use another address.';
    case 'rate_limited':
      return `Too many attempts. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
    case 'validation_error':
      // The domain's sentence names the field and the rule (username, password policy,
      // address); it never echoes a password.
      return error.hasClientMessage
        ? `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`
        : 'The form could not be read. Fill it in again.';
    case 'unavailable':
    case 'timeout':
      return 'Sign-up is temporarily unavailable. Try again in a moment.';
    default:
      return 'Sign-up did not work. Try again.';
  }
}

/** Title and sentence once this form cannot be used any more. */
function deadEnd(error: DomainError, flow: FlowRecord | undefined, now: number): [string, string] {
  if (error.code === 'forbidden') {
    return ['Request refused', 'This sign-up form was sent from another site, so it was refused.'];
  }
  if (error.code === 'not_found') {
    return ['Sign-up not found', 'This sign-up form does not exist or has been cleaned up.'];
  }
  if (error.code === 'rate_limited') {
    const wait = error.retryAfterSeconds ?? 60;
    return ['Too many attempts', `Too many attempts. Try again in ${wait} seconds.`];
  }
  if (error.reason === 'return_to_not_allowed') {
    return [
      'Sign-up link not allowed',
      'This sign-up link asks to continue to an address that is not allowed.',
    ];
  }
  if (error.code === 'unavailable' || error.code === 'timeout') {
    return ['Temporarily unavailable', signUpMessage(error)];
  }
  switch (flow ? flowViewState(flow, now) : undefined) {
    case 'completed':
      return ['Already signed up', 'This sign-up form has already been used.'];
    case 'failed':
      return ['Too many attempts', 'Too many refused attempts on this sign-up form.'];
    case 'expired':
      return ['Sign-up expired', 'This sign-up form has expired.'];
  }
  return [
    'Sign-up failed',
    flow ? 'This sign-up form is out of date.' : 'Sign-up could not start.',
  ];
}

export interface SignUpFailure {
  /** The flow the request was about, when it could be loaded. */
  flow?: FlowRecord;
  /** The poster held the flow's CSRF token and the flow is open: show the form again. */
  formUsable: boolean;
  emailRequired: boolean;
  values?: RegistrationFormInput['values'];
  providers?: RegistrationFormInput['providers'];
  now: number;
}

/**
 * Answers a browser with a page instead of the JSON error, with the error model's status:
 * the form again with the sentence while it can be used, else a short explanation and a
 * way to start again.
 */
export function sendSignUpFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  thrown: unknown,
  context: SignUpFailure,
): FastifyReply | Promise<FastifyReply> {
  const error = refusalOf(thrown);
  if (!error) return handleError(thrown, request, reply);
  request.errorCode = error.code;
  if (error.code === 'rate_limited' && error.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(error.retryAfterSeconds));
  }
  const status = ERROR_STATUS[error.code];
  const { flow } = context;
  if (flow && context.formUsable && error.code !== 'forbidden' && error.code !== 'invalid_token') {
    const page = registrationPage({
      flow,
      emailRequired: context.emailRequired,
      error: signUpMessage(error),
      ...(context.values ? { values: context.values } : {}),
      ...(context.providers ? { providers: context.providers } : {}),
    });
    return sendPage(reply, status, page, landingOrigins(flow));
  }
  const [title, message] = deadEnd(error, flow, context.now);
  const restart =
    error.code === 'unavailable' || error.code === 'timeout'
      ? undefined
      : restartRegistrationUrl(flow);
  return sendPage(reply, status, messagePage({ title, message, restartUrl: restart }));
}

/**
 * A sign-up's answer: the cookie when a session was minted; JSON 201, or for a form post
 * a 303 to the address's verification page (return_to carried on), else to return_to,
 * else the signed-in page.
 */
export function sendSignedUp(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  result: SignedUp,
) {
  const { minted, returnTo } = result;
  if (minted) {
    setSessionCookie(reply, minted.token, {
      cookieDomain: deps.config.cookieDomain,
      sessionTtlMs: deps.sessionTtlMs,
    });
  }
  reply.header('cache-control', 'no-store');
  const verification = result.verification
    ? verificationView(result.verification, returnTo, deps.clock.now())
    : null;
  if (!isFormPost(request)) {
    return reply.code(201).send({
      identity: result.identity,
      session: minted?.session ?? null,
      return_to: returnTo,
      verification,
    });
  }
  if (verification) {
    const target = new URLSearchParams({ id: verification.id });
    if (returnTo) target.set('return_to', returnTo);
    return reply.redirect(`${VERIFICATION_PATH}?${target}`, 303);
  }
  if (returnTo) return reply.redirect(returnTo, 303);
  return sendPage(reply, 200, signedInPage(minted!.session));
}
