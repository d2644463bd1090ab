import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { notFound } from '../errors.js';
import { type Identity, toIdentity } from '../identities/identity.js';
import { type NoticeOrigin, type NoticeSettings, noticeFor } from '../notices/notices.js';
import { type PasswordPolicy, requirePasswordPolicy } from '../password-policy/policy.js';
import type { Store } from '../store.js';
import type { PasswordHasher } from './password-hasher.js';

export interface SetPasswordDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  hasher: PasswordHasher;
  passwordPolicy: PasswordPolicy;
  notices: NoticeSettings;
}

export interface PasswordChange {
  identity: Identity;
  revoked_sessions: number;
}

export interface SetPasswordOptions {
  /** End the identity's live sessions (default): whoever knew the old password may hold one. */
  revokeSessions?: boolean;
  /** A session that stays when the others end: the user's own, changing their password. */
  keepSession?: string;
  /** The user's own browser, for the notice mail (notices/notices.ts). */
  origin?: NoticeOrigin;
}

/**
 * A new password, set by an operator (the CLI), a backend (`PUT /v1/identities/{id}/password`)
 * or the user on the account page (account/change-password.ts). The identity's live sessions
 * are revoked unless `revokeSessions` is false, all but `keepSession` when given. The new
 * hash, the revocation, the audit row (a credential change) and the `password_changed`
 * notice commit together or not at all. A rehash (rehash.ts) is no change and sends none.
 *
 * Sign-ins with the old password lose against the change, whenever they verified it: one
 * still in flight mints only if the hash it verified is still the identity's
 * (passwords/verified-hash.ts), and a flow whose password step passed and that waits for
 * the second factor is closed here, before the revocation, so its session cannot follow.
 */
export async function setPassword(
  deps: SetPasswordDeps,
  actor: Actor,
  identityId: string,
  password: string,
  { revokeSessions = true, keepSession, origin }: SetPasswordOptions = {},
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
  return deps.store.transaction((tx) =>
    writePasswordChange({ ...deps, store: tx }, actor, identityId, passwordHash, {
      revokeSessions,
      keepSession,
      origin,
    }),
  );
}

/**
 * The writes of a password change, through `deps.store`, a transaction the caller holds (a
 * recovery spends its code and mints its session in the same one): the new hash (already
 * hashed: argon2 never runs inside a transaction), the waiting flows closed, the sessions
 * revoked, the audit row and the notice, as `setPassword` says.
 */
export async function writePasswordChange(
  deps: Omit<SetPasswordDeps, 'hasher' | 'passwordPolicy'>,
  actor: Actor,
  identityId: string,
  passwordHash: string,
  { revokeSessions = true, keepSession, origin }: SetPasswordOptions = {},
): Promise<PasswordChange> {
  const tx = deps.store;
  const now = deps.clock.now();
  const updated = await tx.setIdentityPassword(identityId, passwordHash, now);
  if (!updated) throw notFound();
  // Before the revocation: a second step that claimed its flow first has committed its
  // session by the time this UPDATE gets the flow's row, and the revocation sees it.
  await tx.closeWaitingFlows(identityId);
  const revoked = revokeSessions
    ? await tx.revokeIdentitySessions(identityId, now, keepSession)
    : 0;
  await deps.audit.write(tx, actor, {
    action: 'identity_set_password',
    target_identity: identityId,
    details: {
      credential: 'password',
      revoke_sessions: revokeSessions,
      revoked_sessions: revoked,
      ...(keepSession === undefined ? {} : { kept_session: keepSession }),
    },
  });
  await noticeFor(tx, deps, updated, 'password_changed', origin);
  return { identity: toIdentity(updated), revoked_sessions: revoked };
}
