import type { Clock } from '../../lib/clock.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import type { AuditStore } from '../audit/audit.js';
import type { IdentityRecord } from '../identities/identity.js';
import { mintSession } from '../sessions/session-service.js';
import type { MintedSession, SessionDevice } from '../sessions/session.js';
import type { Store } from '../store.js';
import type { Assurance } from './method.js';
import type { SignInMethodId } from './methods.js';

export interface CompleteSignInDeps {
  clock: Clock;
  audit: Pick<AuditLog, 'write'>;
  sessionTtlMs: number;
}

/** How the identity signed in: the method's id (`authenticated_via`) and the assurance reached. */
export interface SignedInBy {
  id: SignInMethodId;
  assurance: Assurance;
}

/** The audit row a service endpoint's sign-in writes with its session. */
export interface SignInAudit {
  actor: Actor;
  action: string;
  details?: Record<string, unknown>;
}

/**
 * The one way a session comes to exist: every sign-in, whatever its method, ends here,
 * inside the caller's transaction, so the session commits with whatever else the sign-in
 * wrote (a completed flow, a new identity and its link) or not at all.
 *
 * `audit` is the row of a service endpoint's sign-in, written in the same transaction
 * with the session's id. A browser flow passes null: its `login` row also records the
 * refusals made before the domain is reached (a foreign Origin, an unreadable body), so
 * it is written once the answer has gone out, from the attempt's notes.
 *
 * `device` is where the sign-in came from (user agent, client address), for the session
 * lists; each caller knows it from its own request.
 */
export async function completeSignIn(
  deps: CompleteSignInDeps,
  tx: Pick<Store, 'insertSession'> & AuditStore,
  identity: IdentityRecord,
  by: SignedInBy,
  audit: SignInAudit | null,
  device: SessionDevice,
): Promise<MintedSession> {
  const minted = await mintSession(deps, tx, identity, by, device);
  if (audit) {
    await deps.audit.write(tx, audit.actor, {
      action: audit.action,
      target_identity: identity.id,
      details: { ...audit.details, session_id: minted.session.id },
    });
  }
  return minted;
}
