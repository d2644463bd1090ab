import type { Clock } from '../../lib/clock.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError } from '../errors.js';
import type { IdentityRecord } from '../identities/identity.js';
import { mintSession } from '../sessions/session-service.js';
import type { MintedSession, SessionDevice } from '../sessions/session.js';
import type { Store } from '../store.js';
import type { Assurance, Redemption } from './method.js';
import type { AuthenticationMethod } from '../sessions/session.js';

export interface CompleteSignInDeps {
  clock: Clock;
  audit: Pick<AuditLog, 'write'>;
  sessionTtlMs: number;
}

/**
 * How the identity signed in: the method's id (`authenticated_via`), the assurance reached,
 * and what its verified credentials must still hold at the mint (method.ts `Redemption`).
 */
export interface SignedInBy {
  id: AuthenticationMethod;
  assurance: Assurance;
  redeem?: readonly Redemption[];
}

/** The audit row a service endpoint's sign-in writes with its session. */
export interface SignInAudit {
  actor: Actor;
  action: string;
  details?: Record<string, unknown>;
}

/**
 * Runs the redemptions inside `tx` (method.ts `Redemption`): one that no longer holds fails
 * the sign-in as `invalid_credentials`, and so rolls back whatever `tx` wrote.
 */
export async function redeemAll(tx: Store, redeem: readonly Redemption[] = []): Promise<void> {
  for (const redemption of redeem) {
    if (!(await redemption(tx))) throw new DomainError('invalid_credentials');
  }
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
 *
 * `by.redeem` runs first, in this transaction: a credential checked before it (a password
 * verified while it was changed, a code another sign-in used meanwhile) mints nothing and
 * fails as `invalid_credentials`, rolling back everything the transaction wrote.
 */
export async function completeSignIn(
  deps: CompleteSignInDeps,
  tx: Store,
  identity: IdentityRecord,
  by: SignedInBy,
  audit: SignInAudit | null,
  device: SessionDevice,
): Promise<MintedSession> {
  await redeemAll(tx, by.redeem);
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
