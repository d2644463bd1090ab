import type { Actor, AuditLog } from '../audit/audit-log.js';
import type { IdentityRecord } from '../identities/identity.js';
import type { Store } from '../store.js';
import type { PasswordHasher } from './password-hasher.js';

export interface RehashDeps {
  store: Pick<Store, 'transaction'>;
  audit: Pick<AuditLog, 'write'>;
  hasher: PasswordHasher;
}

/** Tessera itself: the rehash follows a sign-in but is no caller's request. */
const TESSERA: Actor = { service_name: null, service_id: null };

/**
 * Why a stored hash that just verified should be replaced, as the audit row says it, or
 * null to keep it: an imported hash (bcrypt, PBKDF2, scrypt, an unpeppered argon2), or
 * Tessera's own made with a pepper that is no longer the current one.
 */
function staleness(hasher: PasswordHasher, stored: string): Record<string, unknown> | null {
  const scheme = hasher.foreignScheme(stored);
  if (scheme !== null) return { from: scheme };
  const pepper = hasher.pepperOf(stored);
  // An untagged hash on the current pepper stays as it is: rewriting every user's hash
  // after an upgrade would buy nothing until a rotation, which then rehashes it anyway.
  if (pepper === null || pepper.id === hasher.peppers.current) return null;
  return {
    from: 'tessera',
    from_pepper: pepper.tagged ? pepper.id : null,
    to_pepper: hasher.peppers.current,
  };
}

/**
 * After a password verified against `stored`, a stale hash (see `staleness`): store Tessera's own
 * argon2id with the current pepper instead, audited as a credential change. The swap only
 * happens if the stored hash is still the one that verified, so a password set meanwhile
 * is never overwritten with the older one.
 *
 * Returns the hash that now stands for this password: the fresh one once swapped, else the
 * one that verified. The sign-in's mint checks the identity still has it (verified-hash.ts),
 * so a password set meanwhile fails the sign-in either way.
 */
export async function replaceStaleHash(
  deps: RehashDeps,
  identity: Pick<IdentityRecord, 'id'>,
  stored: string,
  password: string,
): Promise<string> {
  const details = staleness(deps.hasher, stored);
  if (details === null) return stored;
  // Hashed before the transaction: argon2 must never hold a database lock.
  const fresh = await deps.hasher.hash(password);
  return deps.store.transaction(async (tx) => {
    if (!(await tx.replacePasswordHash(identity.id, stored, fresh))) return stored;
    await deps.audit.write(tx, TESSERA, {
      action: 'password_rehash',
      target_identity: identity.id,
      details: { credential: 'password', ...details },
    });
    return fresh;
  });
}
