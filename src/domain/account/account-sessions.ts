import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { notFound } from '../errors.js';
import type { Store } from '../store.js';

export interface AccountSessionDeps {
  store: Store;
  clock: Clock;
  audit: Pick<AuditLog, 'write'>;
}

/**
 * The signed-in user ends one of their own sessions. A session of someone else is
 * `not_found`, exactly like one that does not exist, so ids cannot be probed. Ending one
 * already ended is not an error (the list may be out of date).
 */
export async function endOwnSession(
  deps: AccountSessionDeps,
  actor: Actor,
  identityId: string,
  sessionId: string,
): Promise<void> {
  if (!isUuid(sessionId)) throw notFound();
  await deps.store.transaction(async (tx) => {
    const session = await tx.findSessionById(sessionId);
    if (!session || session.identity_id !== identityId) throw notFound();
    await tx.revokeSessionById(sessionId, deps.clock.now());
    await deps.audit.write(tx, actor, {
      action: 'session_revoke',
      target_identity: identityId,
      details: { session_id: sessionId },
    });
  });
}

/** Ends every live session of the identity but `currentId`; returns how many ended. */
export async function endOtherSessions(
  deps: AccountSessionDeps,
  actor: Actor,
  identityId: string,
  currentId: string,
): Promise<number> {
  return deps.store.transaction(async (tx) => {
    const revoked = await tx.revokeIdentitySessions(identityId, deps.clock.now(), currentId);
    await deps.audit.write(tx, actor, {
      action: 'identity_revoke_sessions',
      target_identity: identityId,
      details: { revoked, kept_session: currentId },
    });
    return revoked;
  });
}
