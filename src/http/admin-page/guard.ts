import type { FastifyRequest } from 'fastify';
import { isOperator } from '../../domain/admin/operators.js';
import { highestAvailableAssurance } from '../../domain/account/credential-change.js';
import { DomainError } from '../../domain/errors.js';
import { requireRecentSignIn } from '../../domain/sessions/recent-sign-in.js';
import type { Session } from '../../domain/sessions/session.js';
import { requireAccountSession } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { ownOrigins, refuseForeignOrigin } from '../origins.js';

/**
 * Why the console refused a signed-in user, by type (the pages word each apart):
 * - `not_operator`: no operator role (`tessera admin grant`);
 * - `second_factor_missing`: an operator whose identity has neither TOTP nor a passkey,
 *   so no session of theirs can reach aal2: they must enrol one first;
 * - `step_up_required`: an operator signed in at aal1 (a password alone) who has one.
 */
export type AdminRefusalKind = 'not_operator' | 'second_factor_missing' | 'step_up_required';

export class AdminRefusal extends DomainError {
  constructor(readonly kind: AdminRefusalKind) {
    super('forbidden');
  }
}

const CSRF_CONTEXT = 'admin-csrf';

/**
 * The console's forms carry a MAC of the session id, as the account pages' do
 * (account-session.ts), under a context of its own: a token the account API hands to the
 * operator's login UI (its CORS zone) is worthless here.
 */
export function adminCsrfToken(deps: AppDeps, session: Session): string {
  return deps.secretBox.mac(CSRF_CONTEXT, session.id);
}

function requireAdminCsrf(deps: AppDeps, request: FastifyRequest, session: Session): void {
  const submitted = (request.body as Record<string, unknown> | undefined)?.csrf_token;
  if (
    typeof submitted !== 'string' ||
    !deps.secretBox.verifyMac(CSRF_CONTEXT, session.id, submitted)
  ) {
    throw new DomainError('forbidden');
  }
}

/**
 * Who may see anything of the console: a valid session (else the account session's own
 * errors, which the pages turn into the login), of an operator, at aal2.
 */
export async function requireOperator(deps: AppDeps, request: FastifyRequest): Promise<Session> {
  const session = await requireAccountSession(deps, request);
  if (!(await isOperator(deps.store, session.identity.id))) throw new AdminRefusal('not_operator');
  if (session.aal !== 'aal2') {
    const strongest = await highestAvailableAssurance(deps.store, session.identity.id);
    throw new AdminRefusal(strongest === 'aal2' ? 'step_up_required' : 'second_factor_missing');
  }
  return session;
}

/** The preamble of every console page: onRequest, before anything else is read. */
export function adminPageHooks(deps: AppDeps) {
  return {
    onRequest: async (request: FastifyRequest) => {
      await requireOperator(deps, request);
    },
  };
}

/**
 * The preamble of every console form post, in this order: an own `Origin` (403), the
 * operator at aal2 (as for pages), then, once the form is parsed, its CSRF token (403) and,
 * for a `destructive` action, a sign-in within SERVICE_PRIVILEGED_WINDOW_MINUTES (403 with
 * the reason `recent_sign_in_required`).
 */
export function adminFormHooks(deps: AppDeps, { destructive }: { destructive: boolean }) {
  return {
    onRequest: [
      refuseForeignOrigin((request) => ownOrigins(request, deps.config)),
      async (request: FastifyRequest) => {
        await requireOperator(deps, request);
      },
    ],
    preValidation: async (request: FastifyRequest) => {
      const session = await requireAccountSession(deps, request);
      requireAdminCsrf(deps, request, session);
      if (destructive) {
        requireRecentSignIn(
          Date.parse(session.issued_at),
          deps.clock.now(),
          deps.config.privilegedWindowMs,
        );
      }
    },
  };
}
