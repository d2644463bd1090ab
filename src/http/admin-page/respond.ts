import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DomainError } from '../../domain/errors.js';
import { resolveReturnTo } from '../../domain/login-flows/return-to.js';
import { ACCOUNT_PATHS } from '../account-page/render.js';
import { verifiedAccountSession } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, handleError, refusalOf } from '../errors.js';
import { returnToAllowList } from '../origins.js';
import { AdminRefusal } from './guard.js';
import { ADMIN_PATHS, type RefusalPageInput, refusalPage } from './render.js';
import { ADMIN_STYLES_HASH } from './styles.js';
import { sendHostedPage } from '../page-headers.js';

/**
 * The hosted pages' headers (account-page/respond.ts) with the console's stylesheet hash:
 * no script at all, no framing, no caching, a same-origin referrer, forms to itself only.
 */
export function sendAdminHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return sendHostedPage(reply, status, html, { styleHash: ADMIN_STYLES_HASH });
}

/**
 * The console page a request is about: itself for a page, the identity's page for one of
 * its actions, where a fresh sign-in comes back to.
 */
function consolePath(request: FastifyRequest): string {
  const path = request.url.split('?')[0]!;
  if (request.method === 'GET') return request.url;
  if (path.startsWith(`${ADMIN_PATHS.identities}/`)) return path.slice(0, path.lastIndexOf('/'));
  if (path.startsWith(ADMIN_PATHS.serviceTokens)) return ADMIN_PATHS.serviceTokens;
  if (path.startsWith(ADMIN_PATHS.oidc)) return ADMIN_PATHS.oidc;
  return ADMIN_PATHS.home;
}

/** The hosted login, coming back to `path`; without return_to if our origin is not allowed. */
export function adminLoginUrl(deps: AppDeps, request: FastifyRequest, path: string): string {
  const here = `${deps.config.publicUrl ?? `${request.protocol}://${request.host}`}${path}`;
  try {
    const back = resolveReturnTo(here, returnToAllowList(request, deps.config));
    return `/v1/login?return_to=${encodeURIComponent(back)}`;
  } catch {
    return '/v1/login';
  }
}

/** A validation error's message as a sentence for a page: `Name must be …`. */
export function sentence(error: DomainError): string {
  return `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`;
}

const SIGNED_OUT = new Set(['invalid_token', 'session_expired', 'identity_disabled']);

/** The page that says why, with the link that helps. */
function refusalFor(deps: AppDeps, request: FastifyRequest, error: DomainError): RefusalPageInput {
  const signIn = (label: string) => ({
    href: adminLoginUrl(deps, request, consolePath(request)),
    label,
    id: 'sign-in-again',
  });
  if (error instanceof AdminRefusal) {
    switch (error.kind) {
      case 'not_operator':
        return {
          title: 'Not an operator',
          message:
            'The admin console is for operators. An operator grants the role with `tessera admin grant`.',
        };
      case 'second_factor_missing':
        return {
          title: 'Second factor needed',
          message:
            'The admin console needs a sign-in with a second factor. Your account has none yet: add a passkey or an authenticator app, then sign in again with it.',
          links: [
            { href: ACCOUNT_PATHS.passkeys, label: 'Add a passkey', id: 'enrol-passkey' },
            {
              href: ACCOUNT_PATHS.twoFactor,
              label: 'Set up an authenticator app',
              id: 'enrol-totp',
            },
          ],
        };
      case 'step_up_required':
        return {
          title: 'Sign in with your second factor',
          message:
            'The admin console needs a sign-in with your second factor: sign in again with a passkey, or with your password and a code from your authenticator app.',
          links: [signIn('Sign in again')],
        };
    }
  }
  if (error.reason === 'recent_sign_in_required') {
    return {
      title: 'Sign in again',
      message: `${error.message} Nothing was changed.`,
      links: [signIn('Sign in again')],
    };
  }
  const back = { href: consolePath(request), label: 'Back to the console' };
  switch (error.code) {
    case 'forbidden':
      return {
        title: 'Request refused',
        message:
          'The form was out of date or sent from another site, so it was refused. Reload the page and try again.',
        links: [back],
      };
    case 'not_found':
      return { title: 'Not found', message: 'There is nothing by that id.', links: [back] };
    case 'validation_error':
      return { title: 'Not accepted', message: sentence(error), links: [back] };
    default:
      return {
        title: 'Not done',
        message: 'The service could not do that just now. Try again in a moment.',
        links: [back],
      };
  }
}

/**
 * Every refusal of the console as a page, never JSON: a signed-out browser goes to the
 * login (303, coming back here), anyone else sees why, at the error's status.
 */
export function adminErrorHandler(deps: AppDeps) {
  return async (thrown: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const error = refusalOf(thrown);
    if (!error) return handleError(thrown, request, reply);
    request.errorCode = error.code;
    if (SIGNED_OUT.has(error.code) && !verifiedAccountSession(request)) {
      return reply
        .header('cache-control', 'no-store')
        .redirect(adminLoginUrl(deps, request, consolePath(request)), 303);
    }
    if (error.code === 'unavailable' || error.code === 'timeout') {
      request.log.warn({ err: thrown }, 'admin console: storage unavailable');
    }
    return sendAdminHtml(
      reply,
      ERROR_STATUS[error.code],
      refusalPage(refusalFor(deps, request, error)),
    );
  };
}
