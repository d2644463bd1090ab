import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Actor } from '../domain/audit/audit-log.js';
import { DomainError } from '../domain/errors.js';
import { BROWSER_ACTOR } from '../domain/login-flows/sign-in-audit.js';
import { requireRecentSignIn } from '../domain/sessions/recent-sign-in.js';
import { verifySession } from '../domain/sessions/session-service.js';
import type { Session } from '../domain/sessions/session.js';
import { sessionCookie } from './cookies.js';
import type { AppDeps } from './deps.js';
import { flowSubmitOrigins } from './origins.js';

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

export function requireAccountSession(deps: AppDeps, request: FastifyRequest): Promise<Session> {
  return verifySession(deps, sessionCookie(request));
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

/** The session's sign-in happened within SERVICE_PRIVILEGED_WINDOW_MINUTES, or 403 `forbidden`. */
export function requireRecentAccountSignIn(deps: AppDeps, session: Session): void {
  requireRecentSignIn(
    Date.parse(session.issued_at),
    deps.clock.now(),
    deps.config.privilegedWindowMs,
  );
}

/**
 * What a state-changing account request must carry besides an allowed Origin: the session,
 * its CSRF token and, for a credential change (`recent`), a recent sign-in.
 */
export async function requireAccountChange(
  deps: AppDeps,
  request: FastifyRequest,
  { recent }: { recent: boolean },
): Promise<Session> {
  const session = await requireAccountSession(deps, request);
  requireAccountCsrf(deps, request, session);
  if (recent) requireRecentAccountSignIn(deps, session);
  return session;
}

/** The end user acting on their own account, as the audit rows name them. */
export function accountActor(request: FastifyRequest): Actor {
  return { ...BROWSER_ACTOR, details: { via: 'account', address: request.ip } };
}

/** Pages that may drive the account endpoints: the hosted pages and the operator's login UI. */
export function accountOrigins(request: FastifyRequest, config: Config): string[] {
  return flowSubmitOrigins(request, config);
}
