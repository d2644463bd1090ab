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
 * After a password verified against an imported hash (bcrypt, PBKDF2, scrypt, an
 * unpeppered argon2): store Tessera's own argon2id with the pepper instead, audited as a
 * credential change. The swap only happens if the stored hash is still the one that
 * verified, so a password set meanwhile is never overwritten with the older one.
 */
export async function replaceImportedHash(
  deps: RehashDeps,
  identity: IdentityRecord,
  password: string,
): Promise<void> {
  const stored = identity.password_hash;
  const scheme = stored === null ? null : deps.hasher.foreignScheme(stored);
  if (stored === null || scheme === null) return;
  // Hashed before the transaction: argon2 must never hold a database lock.
  const fresh = await deps.hasher.hash(password);
  await deps.store.transaction(async (tx) => {
    if (!(await tx.replacePasswordHash(identity.id, stored, fresh))) return;
    await deps.audit.write(tx, TESSERA, {
      action: 'password_rehash',
      target_identity: identity.id,
      details: { credential: 'password', from: scheme },
    });
  });
}
