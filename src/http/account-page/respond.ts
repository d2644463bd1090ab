import type { FastifyReply, FastifyRequest } from 'fastify';
import { needsStepUp } from '../../domain/account/credential-change.js';
import type { DomainError } from '../../domain/errors.js';
import { resolveReturnTo } from '../../domain/login-flows/return-to.js';
import { isMailCodeOpen } from '../../domain/mail-codes/mail-codes.js';
import { isRecentSignIn } from '../../domain/sessions/recent-sign-in.js';
import type { Session } from '../../domain/sessions/session.js';
import { accountCsrfToken } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS } from '../errors.js';
import { returnToAllowList } from '../origins.js';
import { listIdentitySessions } from '../../domain/sessions/session-list.js';
import { toSessionListItem } from '../session-list.js';
import { ACCOUNT_PATHS, type AccountPageInput, accountPage } from './render.js';
import { ACCOUNT_STYLES_HASH } from './styles.js';
import { sendHostedPage } from '../page-headers.js';

/** The notices a form post's 303 can ask the page to show (`?done=`): fixed sentences only. */
export const NOTICES = {
  profile: 'Your profile was saved.',
  password: 'Your password was changed. Your other sessions were ended.',
  'password-kept': 'Your password was changed. Your other sessions stay signed in.',
  session: 'The session was ended.',
  others: 'Your other sessions were ended.',
} as const;
export type Notice = keyof typeof NOTICES;

/**
 * The hosted pages' headers for a page that runs no script (only this stylesheet, no
 * framing, no caching, a same-origin referrer), with the account stylesheet's hash.
 */
export function sendAccountHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return sendHostedPage(reply, status, html, { styleHash: ACCOUNT_STYLES_HASH });
}

export type PageExtras = Pick<AccountPageInput, 'notice' | 'error' | 'profileDraft'>;

/**
 * The hosted login, coming back to the account page: where a signed-out visit goes, and
 * the fresh sign-in the page offers. Without return_to if the page's origin is not allowed.
 */
export function accountLoginUrl(deps: AppDeps, request: FastifyRequest): string {
  const here = `${deps.config.publicUrl ?? `${request.protocol}://${request.host}`}${ACCOUNT_PATHS.page}`;
  try {
    const back = resolveReturnTo(here, returnToAllowList(request, deps.config));
    return `/v1/login?return_to=${encodeURIComponent(back)}`;
  } catch {
    // Not on the allow-list (SERVICE_RETURN_TO_ALLOWED): the login page, then wherever it ends.
    return '/v1/login';
  }
}

/** Renders the account page for `session`, fresh from the database. */
export async function renderAccountPage(
  deps: AppDeps,
  request: FastifyRequest,
  session: Session,
  extras: PageExtras = {},
): Promise<string> {
  const now = deps.clock.now();
  const identityId = session.identity.id;
  const [record, listed, stepUp, waiting] = await Promise.all([
    deps.store.findIdentityById(identityId),
    listIdentitySessions(deps, identityId),
    needsStepUp(deps.store, session),
    deps.store.listPendingMailCodes(identityId, 'verification'),
  ]);
  const pending = waiting.find((code) => isMailCodeOpen(code, now));
  const signedInAt = Date.parse(session.issued_at);
  const windowMs = deps.config.privilegedWindowMs;
  const recent = !stepUp && isRecentSignIn(signedInAt, now, windowMs);
  return accountPage({
    identity: session.identity,
    hasPassword: Boolean(record?.password_hash),
    sessions: listed.sessions.map((row) => ({
      ...toSessionListItem(row, listed.identity),
      current: row.id === session.id,
    })),
    csrfToken: accountCsrfToken(deps, session),
    recentUntil: recent ? signedInAt + windowMs : null,
    stepUpUrl: stepUp ? accountLoginUrl(deps, request) : null,
    pendingEmail: pending ? { address: pending.address, codeId: pending.id } : null,
    ...extras,
  });
}

/** A sentence for a refused form post on the page. */
export function formErrorMessage(error: DomainError): string {
  switch (error.code) {
    case 'validation_error':
      return `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`;
    case 'invalid_credentials':
      return 'The current password is incorrect.';
    case 'forbidden':
      return error.hasClientMessage
        ? error.message
        : 'This form was sent from another site, so it was refused.';
    case 'not_found':
      return 'That session has already ended.';
    case 'rate_limited':
      return `Too many attempts. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
    case 'unavailable':
    case 'timeout':
      return 'The account service is temporarily unavailable. Try again in a moment.';
    default:
      return 'That did not work. Reload the page and try again.';
  }
}

/** The page again, with the refusal above the form it is about, at the error's status. */
export async function sendFormFailure(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  session: Session,
  error: DomainError,
  form: 'profile' | 'password' | 'sessions',
): Promise<FastifyReply> {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const draft =
    form === 'profile'
      ? {
          display_name: typeof body.display_name === 'string' ? body.display_name : undefined,
          avatar_url: typeof body.avatar_url === 'string' ? body.avatar_url : undefined,
        }
      : undefined;
  const html = await renderAccountPage(deps, request, session, {
    error: { message: formErrorMessage(error), form },
    profileDraft: draft,
  });
  return sendAccountHtml(reply, ERROR_STATUS[error.code], html);
}
