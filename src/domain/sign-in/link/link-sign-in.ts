import type { Clock } from '../../../lib/clock.js';
import { newId } from '../../../lib/ids.js';
import type { Actor } from '../../audit/audit-log.js';
import { DomainError, validationError } from '../../errors.js';
import { insertNewIdentity } from '../../identities/identity-service.js';
import {
  type IdentityRecord,
  requireDisplayName,
  requireUsername,
} from '../../identities/identity.js';
import { type AuditNotes, type LinkKey, noteKey, requireLinkKey } from '../../links/link.js';
import type { MintedSession, SessionDevice } from '../../sessions/session.js';
import type { Store } from '../../store.js';
import { UniqueViolation } from '../../unique-violation.js';
import { type CompleteSignInDeps, completeSignIn, type SignInAudit } from '../complete-sign-in.js';
import { signInNotes } from '../method.js';
import { linkMethod, type LinkMethodDeps } from './link-method.js';

export interface LinkSignInDeps extends LinkMethodDeps, CompleteSignInDeps {
  store: LinkMethodDeps['store'] & Pick<Store, 'transaction'>;
  clock: Clock;
}

export interface LinkSignIn extends LinkKey {
  /** Only read when the pair is new; until then it is not even validated (docs/api.md). */
  seed?: unknown;
}

export interface LinkSignInResult extends MintedSession {
  /** True when this call created the identity. */
  created: boolean;
}

interface Seed {
  username: string;
  display_name: string;
}

/**
 * Rounds of "create, lose the race, re-read". A second round is needed only when the
 * winner's link was deleted between its commit and our re-read; a third would need that
 * to happen again, so the loop gives up instead of spinning.
 */
const CREATE_ROUNDS = 2;

/**
 * POST /v1/authenticate/link. Concurrent first sign-ins for one pair are settled by the
 * links primary key, never by a check-then-insert: the first lookup only spares returning
 * users the create attempt. Every caller that saw no link tries to create; exactly one
 * transaction commits, and the others roll back and resolve the winner's link.
 */
export async function signInWithLink(
  deps: LinkSignInDeps,
  actor: Actor,
  input: LinkSignIn,
  notes: AuditNotes,
  device: SessionDevice,
): Promise<LinkSignInResult> {
  notes.details.sign_in_method = linkMethod.id;
  const key = requireLinkKey(input);
  noteKey(notes, key);
  const returning = await resolveLink(deps, actor, key, notes, device);
  if (returning) return returning;
  const seed = requireSeed(input.seed);
  for (let round = 1; ; round += 1) {
    try {
      return await createFromSeed(deps, actor, key, seed, device);
    } catch (error) {
      const usernameTaken = error instanceof DomainError && error.code === 'username_taken';
      if (!usernameTaken && !(error instanceof UniqueViolation)) throw error;
      // The conflicting row is committed by now: PostgreSQL makes a conflicting insert wait
      // for the other transaction's outcome, and SQLite runs one writer at a time. So a
      // link created by a concurrent sign-in for this pair is visible here, including when
      // that sign-in used the same seed username and our identity insert failed first.
      const resolved = await resolveLink(deps, actor, key, notes, device);
      if (resolved) return resolved;
      // No link for the pair: the username belongs to an identity this pair never created.
      if (usernameTaken) throw error;
      if (round === CREATE_ROUNDS) throw new DomainError('unavailable');
    }
  }
}

/** The returning-user path; undefined when the pair is not linked at all. */
async function resolveLink(
  deps: LinkSignInDeps,
  actor: Actor,
  key: LinkKey,
  notes: AuditNotes,
  device: SessionDevice,
): Promise<LinkSignInResult | undefined> {
  const seen = signInNotes();
  let outcome;
  try {
    outcome = await linkMethod.authenticate(deps, key, seen);
  } finally {
    if (seen.identityId !== null) notes.target = seen.identityId;
  }
  if ('failure' in outcome) {
    // No identity holds the pair: the caller creates one from the seed.
    if (outcome.failure === 'invalid_credentials') return undefined;
    throw new DomainError(outcome.failure);
  }
  const { identity } = outcome;
  return deps.store.transaction(async (tx) => {
    const minted = await completeSignIn(
      deps,
      tx,
      identity,
      linkMethod,
      signInAudit(actor, key, false),
      device,
    );
    return { ...minted, created: false };
  });
}

/** Identity, verified link and session commit together or not at all. */
function createFromSeed(
  deps: LinkSignInDeps,
  actor: Actor,
  key: LinkKey,
  seed: Seed,
  device: SessionDevice,
): Promise<LinkSignInResult> {
  const now = deps.clock.now();
  const identity: IdentityRecord = {
    id: newId(),
    username: seed.username,
    display_name: seed.display_name,
    avatar_url: null,
    email: null,
    email_verified_at: null,
    state: 'active',
    password_hash: null,
    created_at: now,
    updated_at: now,
  };
  return deps.store.transaction(async (tx) => {
    await insertNewIdentity(tx, identity);
    await tx.insertLink({ ...key, identity_id: identity.id, verified_at: now, linked_at: now });
    const minted = await completeSignIn(
      deps,
      tx,
      identity,
      linkMethod,
      signInAudit(actor, key, true),
      device,
    );
    return { ...minted, created: true };
  });
}

function signInAudit(actor: Actor, key: LinkKey, created: boolean): SignInAudit {
  return {
    actor,
    action: 'authenticate_link',
    details: { ...key, created, sign_in_method: linkMethod.id },
  };
}

function requireSeed(seed: unknown): Seed {
  if (seed === undefined) {
    throw validationError('seed (username, display_name) is required for a pair not linked yet');
  }
  if (typeof seed !== 'object' || seed === null || Array.isArray(seed)) {
    throw validationError('seed must be an object with username and display_name');
  }
  const { username, display_name: displayName, ...rest } = seed as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw validationError(`seed: unknown field ${unknown}`);
  if (username === undefined) throw validationError('seed: missing required field username');
  if (displayName === undefined) {
    throw validationError('seed: missing required field display_name');
  }
  if (typeof username !== 'string') throw validationError('seed.username must be string');
  if (typeof displayName !== 'string') throw validationError('seed.display_name must be string');
  return {
    username: requireUsername(username, 'seed.username'),
    display_name: requireDisplayName(displayName, 'seed.display_name'),
  };
}
