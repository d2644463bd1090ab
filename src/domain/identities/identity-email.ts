import type { Actor } from '../audit/audit-log.js';
import { DomainError, notFound, validationError } from '../errors.js';
import { UniqueViolation } from '../unique-violation.js';
import { requireEmail } from './email.js';
import type { IdentityDeps, IdentityRead } from './identity-service.js';
import { lookUpIdentity, resolveIdentity } from './identity-service.js';
import { type Identity, type IdentityRecord, toIdentity } from './identity.js';
import type { IdentityStore } from './identity-store.js';

export interface EmailChange {
  /** The new address; null removes it. */
  email: string | null;
  /**
   * Whether the caller vouches for the address. Left out: false for a new address; for
   * the address the identity already has, its verification stays as it is (a repeated
   * PUT does not undo a verification).
   */
  verified?: boolean;
}

/** An address that cannot be one cannot be anyone's: not_found, no query. */
export function findIdentityByEmail(
  store: Pick<IdentityStore, 'findIdentityByEmail'>,
  raw: string,
  /** The row already read with the caller's token (`readCallerWithIdentity`). */
  read?: IdentityRead,
): Promise<IdentityRecord> {
  return lookUpIdentity((value) => store.findIdentityByEmail(value), 'email', raw, read);
}

/**
 * `PUT /v1/identities/{id}/email` and `identity set-email`: a backend's (or operator's)
 * change, so no second factor is asked for. The address's UNIQUE index settles races:
 * of concurrent changes to one address, one wins and the others are `email_taken`.
 */
export async function setIdentityEmail(
  deps: IdentityDeps,
  actor: Actor,
  idOrUsername: string,
  change: EmailChange,
): Promise<Identity> {
  const email = change.email === null ? null : requireEmail(change.email);
  if (email === null && change.verified === true) {
    throw validationError('verified needs an email');
  }
  try {
    return await deps.store.transaction(async (tx) => {
      const target = await resolveIdentity(tx, idOrUsername);
      const now = deps.clock.now();
      const verifiedAt = verificationOf(target, email, change.verified, now);
      const updated = await tx.setIdentityEmail(target.id, email, verifiedAt, now);
      if (!updated) throw notFound();
      await deps.audit.write(tx, actor, {
        action: 'identity_set_email',
        target_identity: target.id,
        // Whether, not what: the address itself stays out of the audit trail.
        details: {
          email: email === null ? 'removed' : email === target.email ? 'same' : 'changed',
          verified: verifiedAt !== null,
        },
      });
      return toIdentity(updated);
    });
  } catch (error) {
    // The username is not written here: the address's index is the only one to refuse.
    if (error instanceof UniqueViolation) throw new DomainError('email_taken');
    throw error;
  }
}

/** When the address counts as verified after the change; null: unverified (or none). */
function verificationOf(
  target: IdentityRecord,
  email: string | null,
  verified: boolean | undefined,
  now: number,
): number | null {
  if (email === null) return null;
  if (verified === undefined) return email === target.email ? target.email_verified_at : null;
  if (!verified) return null;
  // Vouched for again: an address already verified keeps the time it first was.
  return email === target.email && target.email_verified_at !== null
    ? target.email_verified_at
    : now;
}
