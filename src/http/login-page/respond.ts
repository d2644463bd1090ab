import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../../domain/errors.js';
import { type FlowRecord, flowViewState } from '../../domain/login-flows/flow.js';
import { verifySession } from '../../domain/sessions/session-service.js';
import type { Session } from '../../domain/sessions/session.js';
import { sessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, refusalOf } from '../errors.js';
import type { LoginOffers } from './offers.js';
import { loginPage, messagePage } from './render.js';
import { STYLES_HASH } from './styles.js';
import { sendHostedPage } from '../page-headers.js';

/** The encodings an HTML form can submit; such a client is a browser and gets pages. */
const FORM_TYPES = new Set([
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
]);

export function isFormPost(request: FastifyRequest): boolean {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  return type !== undefined && FORM_TYPES.has(type);
}

/** True when the client ranks HTML above JSON (a navigating browser), by the Accept q-values. */
export function prefersHtml(request: FastifyRequest): boolean {
  let html = 0;
  let json = 0;
  for (const part of (request.headers.accept ?? '').split(',')) {
    const [type = '', ...params] = part.split(';').map((item) => item.trim().toLowerCase());
    const qParam = params.find((param) => param.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'text/html' || type === 'application/xhtml+xml') html = Math.max(html, q);
    else if (type === 'application/json' || type === 'application/*' || type === '*/*') {
      json = Math.max(json, q);
    }
  }
  return html > json;
}

/**
 * Sends a hosted page with its security headers. The CSP allows no resource but the inline
 * stylesheet and, on a page that has them, Tessera's own scripts (`script-src 'self'`, no
 * inline script) and their calls back to Tessera (`connect-src 'self'`). `form-action` must
 * also allow where the form's 303 lands, because Chromium applies it to the redirect after
 * the post.
 *
 * Referrer-Policy is `same-origin`, not `no-referrer`: under `no-referrer` browsers send
 * `Origin: null` on the form's own POST, which the login-CSRF check must refuse (a
 * sandboxed frame on any site sends the same). `same-origin` still gives other sites,
 * `return_to` included, no referrer at all, so the flow URL never leaks.
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  html: string,
  landingOrigins: readonly string[] = [],
): FastifyReply {
  return sendHostedPage(reply, status, html, {
    styleHash: STYLES_HASH,
    // Only layout() writes a script tag (every interpolated value is escaped, so no text
    // can make one): a page with one loads Tessera's own scripts and calls back to Tessera.
    scripts: html.includes('<script src="/'),
    formAction: ["'self'", ...landingOrigins].join(' '),
  });
}

/**
 * The browser's session when it is valid now, for the login page's "you are signed in"
 * note and its Sign out; none when there is no cookie or it names no live session.
 */
export async function signedInSession(
  deps: AppDeps,
  request: FastifyRequest,
): Promise<Session | undefined> {
  const token = sessionCookie(request);
  if (token === undefined) return undefined;
  try {
    return await verifySession(deps, token);
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
}

/** The origin a flow lands on after sign-in, for `form-action`. */
export function landingOrigins(flow: FlowRecord | undefined): string[] {
  return flow?.return_to ? [new URL(flow.return_to).origin] : [];
}

export function restartUrl(flow: FlowRecord | undefined): string {
  return flow?.return_to
    ? `/v1/login?return_to=${encodeURIComponent(flow.return_to)}`
    : '/v1/login';
}

/** A sentence for a failure that leaves the form usable. */
export function formMessage(error: DomainError): string {
  switch (error.code) {
    case 'invalid_credentials':
      return 'The username or password is incorrect.';
    case 'identity_disabled':
      return 'This account is disabled. Contact your administrator.';
    case 'rate_limited':
      return `Too many attempts. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
    case 'validation_error':
      return error.reason === 'missing_credentials'
        ? 'Enter your username and password.'
        : 'The form could not be read. Enter your username and password again.';
    case 'unavailable':
    case 'timeout':
      return 'Sign-in is temporarily unavailable. Try again in a moment.';
    default:
      return 'Sign-in did not work. Try again.';
  }
}

/** Title and sentence for a failure after which this form cannot be used any more. */
function deadEnd(error: DomainError, flow: FlowRecord | undefined, now: number): [string, string] {
  if (error.reason === 'email_verification_required') {
    return [
      'Confirm your email address',
      'Your email address is not confirmed yet. Open the link in the mail we sent you, or type its code on the page it opens, then sign in again.',
    ];
  }
  if (error.code === 'forbidden') {
    return ['Request refused', 'This sign-in form was sent from another site, so it was refused.'];
  }
  if (error.code === 'not_found') {
    return ['Sign-in not found', 'This sign-in form does not exist or has been cleaned up.'];
  }
  if (error.code === 'rate_limited') {
    const wait = error.retryAfterSeconds ?? 60;
    return ['Too many attempts', `Too many sign-in attempts. Try again in ${wait} seconds.`];
  }
  if (error.reason === 'return_to_not_allowed') {
    return [
      'Sign-in link not allowed',
      'This sign-in link asks to continue to an address that is not allowed.',
    ];
  }
  if (error.code === 'unavailable' || error.code === 'timeout') {
    return ['Temporarily unavailable', formMessage(error)];
  }
  switch (flow ? flowViewState(flow, now) : undefined) {
    case 'completed':
      return ['Already signed in', 'This sign-in form has already been used.'];
    case 'failed':
      return ['Too many attempts', 'Too many failed attempts on this sign-in form.'];
    case 'expired':
      return ['Sign-in expired', 'This sign-in form has expired.'];
  }
  return [
    'Sign-in failed',
    flow ? 'This sign-in form is out of date.' : 'Sign-in could not start.',
  ];
}

export interface FailureContext {
  /** The flow the request was about, when it could be loaded. */
  flow?: FlowRecord;
  /** Re-render the form (the submitter proved it knew the flow's CSRF token). */
  formUsable: boolean;
  username?: string;
  now: number;
  /** The form to show again with the error, when it is not the password form (the code step). */
  renderForm?: (error: DomainError) => string;
  /** What the login form offers beside the password (offers.ts), when it is shown again. */
  offers?: LoginOffers;
}

/**
 * Answers a browser with a page instead of the JSON error: the form again with the error
 * above it when the form can still be used, a short explanation with a way to start
 * again when not. The status is the error model's, so scripts and tests can still tell.
 */
export function sendFailurePage(
  request: FastifyRequest,
  reply: FastifyReply,
  thrown: unknown,
  context: FailureContext,
): FastifyReply {
  const error = refusalOf(thrown);
  if (!error) {
    request.log.error({ err: thrown }, 'unhandled error');
    request.errorCode = 'internal_error';
    const page = messagePage({ title: 'Something went wrong', message: 'Try again later.' });
    return sendPage(reply, 500, page);
  }
  const code: ErrorCode = error.code;
  request.errorCode = code;
  if (code === 'rate_limited' && error.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(error.retryAfterSeconds));
  }
  const { flow } = context;
  // A not_found with a flow at hand is a method turned off (its form must not come back).
  const usable = code !== 'forbidden' && code !== 'invalid_token' && code !== 'not_found';
  if (flow && context.formUsable && usable) {
    const page = context.renderForm
      ? context.renderForm(error)
      : loginPage({
          flow,
          error: formMessage(error),
          username: context.username,
          ...(context.offers ? { offers: context.offers } : {}),
        });
    return sendPage(reply, ERROR_STATUS[code], page, landingOrigins(flow));
  }
  const [title, message] = deadEnd(error, flow, context.now);
  const restart = code === 'unavailable' || code === 'timeout' ? undefined : restartUrl(flow);
  return sendPage(reply, ERROR_STATUS[code], messagePage({ title, message, restartUrl: restart }));
}
