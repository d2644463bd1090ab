import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { notFound } from '../errors.js';
import { type Identity, toIdentity } from '../identities/identity.js';
import { type PasswordPolicy, requirePasswordPolicy } from '../password-policy/policy.js';
import type { Store } from '../store.js';
import type { PasswordHasher } from './password-hasher.js';

export interface SetPasswordDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  hasher: PasswordHasher;
  passwordPolicy: PasswordPolicy;
}

export interface PasswordChange {
  identity: Identity;
  revoked_sessions: number;
}

/**
 * An operator (the CLI; later `PUT /v1/identities/{id}/password`) sets a new password.
 * The identity's live sessions are revoked unless `revokeSessions` is false: whoever knew
 * the old password may hold one. The new hash, the revocation and the audit row (a
 * credential change) commit together or not at all.
 */
export async function setPassword(
  deps: SetPasswordDeps,
  actor: Actor,
  identityId: string,
  password: string,
  { revokeSessions = true }: { revokeSessions?: boolean } = {},
): Promise<PasswordChange> {
  if (!isUuid(identityId)) throw notFound();
  const current = await deps.store.findIdentityById(identityId);
  if (!current) throw notFound();
  await requirePasswordPolicy(deps.passwordPolicy, password, {
    username: current.username,
    displayName: current.display_name,
  });
  // Hashed before the transaction: argon2 must never hold a database lock.
  const passwordHash = await deps.hasher.hash(password);
  return deps.store.transaction(async (tx) => {
    const now = deps.clock.now();
    const updated = await tx.setIdentityPassword(identityId, passwordHash, now);
    if (!updated) throw notFound();
    const revoked = revokeSessions ? await tx.revokeIdentitySessions(identityId, now) : 0;
    await deps.audit.write(tx, actor, {
      action: 'identity_set_password',
      target_identity: identityId,
      details: {
        credential: 'password',
        revoke_sessions: revokeSessions,
        revoked_sessions: revoked,
      },
    });
    return { identity: toIdentity(updated), revoked_sessions: revoked };
  });
}
