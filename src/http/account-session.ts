import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import {
  type CredentialChangeDeps,
  requireCredentialChange,
} from '../domain/account/credential-change.js';
import type { Actor } from '../domain/audit/audit-log.js';
import { DomainError } from '../domain/errors.js';
import { BROWSER_ACTOR } from '../domain/login-flows/sign-in-audit.js';
import { verifySession } from '../domain/sessions/session-service.js';
import type { Session } from '../domain/sessions/session.js';
import { sessionCookie } from './cookies.js';
import type { AppDeps } from './deps.js';
import { flowSubmitOrigins, refuseForeignOrigin } from './origins.js';

/**
 * The signed-in user's own pages and JSON endpoints (`/v1/account...`): who is asking (the
 * `service_session` cookie, checked like whoami), and the CSRF token their state-changing
 * requests must carry.
 *
 * The CSRF token is a MAC of the session id under the secret box's key: nothing to store,
 * bound to one session (a token seen by another user is worthless to them), and it changes
 * when the session does. Forms send it as `csrf_token`; JSON clients as the
 * `X-CSRF-Token` header or the same body field. `Origin` is checked as well (accountOrigins).
 */
export const ACCOUNT_CSRF_HEADER = 'x-csrf-token';

const CSRF_CONTEXT = 'account-csrf';

/** Each request's session, once verified: the hooks and the handler check it once. */
const verified = new WeakMap<FastifyRequest, Session>();

/** The session of the request's cookie, checked like whoami (once per request). */
export async function requireAccountSession(
  deps: AppDeps,
  request: FastifyRequest,
): Promise<Session> {
  const known = verified.get(request);
  if (known) return known;
  const session = await verifySession(deps, sessionCookie(request));
  verified.set(request, session);
  return session;
}

/** The session a hook already verified for this request; null when none was (yet). */
export function verifiedAccountSession(request: FastifyRequest): Session | null {
  return verified.get(request) ?? null;
}

export function accountCsrfToken(deps: AppDeps, session: Session): string {
  return deps.secretBox.mac(CSRF_CONTEXT, session.id);
}

/** The token from the header, else the body's `csrf_token`; 403 `forbidden` if it is not this session's. */
export function requireAccountCsrf(deps: AppDeps, request: FastifyRequest, session: Session): void {
  const header = request.headers[ACCOUNT_CSRF_HEADER];
  const body = request.body as Record<string, unknown> | undefined;
  const submitted = typeof header === 'string' ? header : body?.csrf_token;
  if (
    typeof submitted !== 'string' ||
    !deps.secretBox.verifyMac(CSRF_CONTEXT, session.id, submitted)
  ) {
    throw new DomainError('forbidden', 'The page is out of date: reload it and try again.');
  }
}

/** What a credential check needs, from the app's deps. */
export function credentialChangeDeps(deps: AppDeps): CredentialChangeDeps {
  return { ...deps, privilegedWindowMs: deps.config.privilegedWindowMs };
}

/**
 * The preamble of every state-changing account route (`/v1/account/...`, passkeys and
 * two-factor alike), as route hooks, in this order:
 *
 * 1. onRequest, before the body is even read: an allowed `Origin` (403 `forbidden`), then
 *    the session (401 `invalid_token` / `session_expired`, 403 `identity_disabled`). A
 *    signed-out request learns nothing about the body's validation.
 * 2. preValidation, once the body is parsed (a form's token is a field): the session's CSRF
 *    token and, for a `credential` change, requireCredentialChange (the identity's
 *    strongest factor and a recent sign-in, 403 `forbidden` with a message).
 *
 * The handler then reads the session with requireAccountSession, which does not check
 * it again. A route whose check depends on the body (a password change with or without
 * the current password) passes `credential: false` and checks in its domain function.
 */
export function accountChangeHooks(deps: AppDeps, { credential }: { credential: boolean }) {
  return {
    onRequest: [
      refuseForeignOrigin((request) => accountOrigins(request, deps.config)),
      async (request: FastifyRequest) => {
        await requireAccountSession(deps, request);
      },
    ],
    preValidation: async (request: FastifyRequest) => {
      const session = await requireAccountSession(deps, request);
      requireAccountCsrf(deps, request, session);
      if (credential) await requireCredentialChange(credentialChangeDeps(deps), session);
    },
  };
}

/** The end user acting on their own account, as the audit rows name them. */
export function accountActor(request: FastifyRequest): Actor {
  return { ...BROWSER_ACTOR, details: { via: 'account', address: request.ip } };
}

/** Pages that may drive the account endpoints: the hosted pages and the operator's login UI. */
export function accountOrigins(request: FastifyRequest, config: Config): string[] {
  return flowSubmitOrigins(request, config);
}
