import type { Clock } from '../../lib/clock.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound, validationError } from '../errors.js';
import { getIdentity } from '../identities/identity-service.js';
import { requireIdentityId } from '../identities/identity.js';
import type { Store } from '../store.js';
import {
  type AuditNotes,
  type Link,
  type LinkKey,
  noteKey,
  requireLinkKey,
  toLink,
} from './link.js';

export interface LinkDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
}

export interface Attachment extends LinkKey {
  verified?: boolean;
}

/**
 * POST /v1/identities/{id}/links: attach a pair, or confirm one the identity already holds.
 * The claim is one conditional insert, so two identities attaching the same pair at once
 * cannot both win, and a pair owned by someone else is never moved.
 */
export async function attachLink(
  deps: LinkDeps,
  actor: Actor,
  identityId: string,
  input: Attachment,
  notes: AuditNotes,
): Promise<Link> {
  const key = requireLinkKey(input);
  noteKey(notes, key);
  requireIdentityId(identityId);
  const verified = input.verified === true;
  return deps.store.transaction(async (tx) => {
    await getIdentity(tx, identityId);
    const now = deps.clock.now();
    const record = {
      ...key,
      identity_id: identityId,
      verified_at: verified ? now : null,
      linked_at: now,
    };
    let claimed = await tx.claimLink(record);
    let link = await tx.findLink(key.provider, key.subject);
    if (!link) {
      // The owner that beat our claim detached the pair before this read: claim again.
      claimed = await tx.claimLink(record);
      link = await tx.findLink(key.provider, key.subject);
    }
    if (link && link.identity_id !== identityId) {
      throw validationError('the (provider, subject) pair is already linked to another identity');
    }
    if (link && !claimed && verified) {
      link = await tx.markLinkVerified(key.provider, key.subject, now);
    }
    // Only a pair detached and re-attached faster than these statements run gets here;
    // the answer is retryable, like any other transient failure.
    if (!link) throw new DomainError('unavailable');
    await deps.audit.write(tx, actor, {
      action: 'link_attach',
      target_identity: identityId,
      details: { ...key, created: claimed, verified: link.verified_at !== null },
    });
    return toLink(link);
  });
}

/** GET /v1/identities/{id}/links: oldest first, pending (unverified) claims included. */
export async function listIdentityLinks(store: Store, identityId: string): Promise<Link[]> {
  await getIdentity(store, identityId);
  return (await store.listLinks(identityId)).map(toLink);
}

/** DELETE /v1/identities/{id}/links: only the identity in the path loses a link. */
export async function detachLink(
  deps: LinkDeps,
  actor: Actor,
  identityId: string,
  input: LinkKey,
  notes: AuditNotes,
): Promise<void> {
  const key = requireLinkKey(input);
  noteKey(notes, key);
  requireIdentityId(identityId);
  await deps.store.transaction(async (tx) => {
    await getIdentity(tx, identityId);
    if (!(await tx.deleteLink(identityId, key.provider, key.subject))) throw notFound();
    await deps.audit.write(tx, actor, {
      action: 'link_detach',
      target_identity: identityId,
      details: { ...key },
    });
  });
}
