import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import { hashToken } from '../../lib/tokens.js';
import { UniqueViolation } from '../unique-violation.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound, validationError } from '../errors.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { type PasswordPolicy, requirePasswordPolicy } from '../password-policy/policy.js';
import type { SessionDeps } from '../sessions/session-service.js';
import type { MintedSession, SessionDevice } from '../sessions/session.js';
import { completeSignIn } from '../sign-in/complete-sign-in.js';
import { passwordMethod } from '../sign-in/password/password-method.js';
import type { ServiceCaller } from '../service-tokens/service-token.js';
import {
  authenticateServiceToken,
  callerOfRecord,
} from '../service-tokens/service-token-service.js';
import type { Store } from '../store.js';
import type { LegacyTokens } from '../tokens/legacy-tokens.js';
import {
  type Identity,
  type IdentityRecord,
  type IdentityState,
  parseUsername,
  requireAvatarUrl,
  requireDisplayName,
  requireIdentityId,
  requireUsername,
  toIdentity,
} from './identity.js';
import type { IdentityKey, ProfilePatch } from './identity-store.js';
import { parseEmail, requireEmail } from './email.js';

export interface IdentityDeps extends SessionDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  hasher: PasswordHasher;
  passwordPolicy: PasswordPolicy;
}

export interface Registration {
  username: string;
  password: string;
  display_name?: string;
  avatar_url?: string | null;
  email?: string | null;
  /** A trusted backend vouches for the address; needs `email`. */
  email_verified?: boolean;
}

/** Validates and hashes outside any transaction: argon2 must never hold a database lock. */
async function prepareIdentity(deps: IdentityDeps, input: Registration): Promise<IdentityRecord> {
  const username = requireUsername(input.username);
  const displayName = requireDisplayName(input.display_name ?? username);
  const avatarUrl = requireAvatarUrl(input.avatar_url ?? null);
  const email = input.email == null ? null : requireEmail(input.email);
  if (input.email_verified === true && email === null) {
    throw validationError('email_verified needs an email');
  }
  await requirePasswordPolicy(deps.passwordPolicy, input.password, { username, displayName });
  const passwordHash = await deps.hasher.hash(input.password);
  const now = deps.clock.now();
  return {
    id: newId(),
    username,
    display_name: displayName,
    avatar_url: avatarUrl,
    email,
    email_verified_at: input.email_verified === true ? now : null,
    state: 'active',
    password_hash: passwordHash,
    created_at: now,
    updated_at: now,
  };
}

/**
 * The username's and the address's UNIQUE indexes settle races: exactly one concurrent
 * insert wins. Without an address only the username can be taken; with one, which rule
 * refused is told once the transaction has ended (`inserting`).
 */
export async function insertNewIdentity(tx: Store, record: IdentityRecord): Promise<void> {
  try {
    await tx.insertIdentity(record);
  } catch (error) {
    if (error instanceof UniqueViolation && record.email === null) {
      throw new DomainError('username_taken');
    }
    throw error;
  }
}

/**
 * Runs the transaction that inserts `record`; a unique violation becomes `email_taken` or
 * `username_taken`. The drivers do not say which index refused (SQLite names it only in
 * its message), so the answer reads the address after the rollback: the winner that
 * refused this insert has committed by then (PostgreSQL made the insert wait for it;
 * SQLite writes one at a time), so the address is found held unless the refusal was the
 * username's.
 */
export async function inserting<T>(
  store: Store,
  record: IdentityRecord,
  transaction: () => Promise<T>,
): Promise<T> {
  try {
    return await transaction();
  } catch (error) {
    if (!(error instanceof UniqueViolation) || record.email === null) throw error;
    const holder = await store.findIdentityByEmail(record.email);
    throw new DomainError(holder ? 'email_taken' : 'username_taken');
  }
}

export async function registerIdentity(
  deps: IdentityDeps,
  actor: Actor,
  input: Registration,
): Promise<Identity> {
  const record = await prepareIdentity(deps, input);
  await inserting(deps.store, record, () =>
    deps.store.transaction(async (tx) => {
      await insertNewIdentity(tx, record);
      await deps.audit.write(tx, actor, {
        action: 'identity_register',
        target_identity: record.id,
        details: registrationDetails(record),
      });
    }),
  );
  return toIdentity(record);
}

export async function registerAndAuthenticate(
  deps: IdentityDeps,
  actor: Actor,
  input: Registration,
  device: SessionDevice,
): Promise<MintedSession> {
  const record = await prepareIdentity(deps, input);
  return inserting(deps.store, record, () =>
    deps.store.transaction(async (tx) => {
      await insertNewIdentity(tx, record);
      return completeSignIn(
        deps,
        tx,
        record,
        passwordMethod,
        {
          actor,
          action: 'identity_register_and_authenticate',
          details: { sign_in_method: passwordMethod.id, ...registrationDetails(record) },
        },
        device,
      );
    }),
  );
}

/** Whether a registration brought an address, and whether its backend vouched for it. */
function registrationDetails(record: IdentityRecord): Record<string, unknown> {
  return record.email === null ? {} : { email_verified: record.email_verified_at !== null };
}

/** An id that cannot be one names no identity: not_found, no query. */
export function getIdentity(
  store: Store,
  id: string,
  /** The row already read with the caller's token (`readCallerWithIdentity`). */
  read?: IdentityRead,
): Promise<IdentityRecord> {
  return lookUpIdentity((value) => store.findIdentityById(value), 'id', id, read);
}

/**
 * The identity a lookup's `raw` value names by `by`, else not_found. A value that cannot
 * name one (PARSE_KEY) is not read; the row read with the caller's token answers when it
 * was read for the same value.
 */
export async function lookUpIdentity(
  find: (value: string) => Promise<IdentityRecord | undefined>,
  by: IdentityKey,
  raw: string,
  read?: IdentityRead,
): Promise<IdentityRecord> {
  const value = PARSE_KEY[by](raw);
  const record =
    value === null ? undefined : isReadBy(read, by, value) ? read.found : await find(value);
  if (!record) throw notFound();
  return record;
}

/** An identity lookup's row, read before the lookup asks for it, by `by` equal to `value`. */
export interface IdentityRead {
  by: IdentityKey;
  value: string;
  found: IdentityRecord | undefined;
}

/** Whether `read` answers the lookup of `value` by `by`. */
function isReadBy(
  read: IdentityRead | undefined,
  by: IdentityKey,
  value: string,
): read is IdentityRead {
  return read !== undefined && read.by === by && read.value === value;
}

/** A lookup's value as the store is asked for it; null when it cannot name an identity. */
const PARSE_KEY: Record<IdentityKey, (raw: string) => string | null> = {
  id: (raw) => (isUuid(raw) ? raw : null),
  username: parseUsername,
  email: parseEmail,
};

/**
 * A service asking about an identity (`GET /v1/identities/{id}`, `?username=`, `?email=`):
 * its bearer token and the identity it names, read together (one round trip on PostgreSQL
 * where the two reads were two). The caller is refused as `authenticateServiceToken`
 * refuses it; the row is for `getIdentity`, `findIdentityByUsername` or
 * `findIdentityByEmail`. A value that cannot name an identity (an id that is not a UUID, a
 * name that is no username, an address that is none, no value at all) is not read: the
 * caller alone is.
 */
export async function readCallerWithIdentity(
  deps: { store: Store; legacyTokens: Pick<LegacyTokens, 'accepts'> },
  serviceToken: string,
  by: IdentityKey,
  raw: unknown,
): Promise<{ caller: ServiceCaller; read?: IdentityRead }> {
  const value = typeof raw === 'string' ? PARSE_KEY[by](raw) : null;
  if (!deps.legacyTokens.accepts('service', serviceToken) || value === null) {
    return { caller: await authenticateServiceToken(deps, serviceToken) };
  }
  const both = await deps.store.findCallerAndIdentity(hashToken(serviceToken), by, value);
  return { caller: callerOfRecord(both.serviceToken), read: { by, value, found: both.identity } };
}

/** A name that cannot be a username cannot exist either: not_found, no query. */
export function findIdentityByUsername(
  store: Store,
  raw: string,
  /** The row already read with the caller's token (`readCallerWithIdentity`). */
  read?: IdentityRead,
): Promise<IdentityRecord> {
  return lookUpIdentity((value) => store.findIdentityByUsername(value), 'username', raw, read);
}

/** For the CLI: an id or a username. */
export async function resolveIdentity(store: Store, idOrUsername: string): Promise<IdentityRecord> {
  return isUuid(idOrUsername)
    ? getIdentity(store, idOrUsername)
    : findIdentityByUsername(store, idOrUsername);
}

export async function updateProfile(
  deps: IdentityDeps,
  actor: Actor,
  id: string,
  input: { display_name?: string; avatar_url?: string | null },
): Promise<Identity> {
  const patch: ProfilePatch = {};
  if (input.display_name !== undefined) patch.display_name = requireDisplayName(input.display_name);
  if (input.avatar_url !== undefined) patch.avatar_url = requireAvatarUrl(input.avatar_url);
  requireIdentityId(id);
  return deps.store.transaction(async (tx) => {
    const updated = await tx.updateIdentityProfile(id, patch, deps.clock.now());
    if (!updated) throw notFound();
    await deps.audit.write(tx, actor, {
      action: 'identity_update',
      target_identity: id,
      details: { fields: Object.keys(patch) },
    });
    return toIdentity(updated);
  });
}

export async function setIdentityState(
  deps: IdentityDeps,
  actor: Actor,
  idOrUsername: string,
  state: IdentityState,
  options: { revokeSessions?: boolean } = {},
): Promise<{ identity: Identity; revoked_sessions: number }> {
  return deps.store.transaction(async (tx) => {
    const target = await resolveIdentity(tx, idOrUsername);
    const now = deps.clock.now();
    const updated = await tx.setIdentityState(target.id, state, now);
    if (!updated) throw notFound();
    const revokedSessions = options.revokeSessions
      ? await tx.revokeIdentitySessions(target.id, now)
      : 0;
    await deps.audit.write(tx, actor, {
      action: state === 'disabled' ? 'identity_disable' : 'identity_enable',
      target_identity: target.id,
      details: options.revokeSessions ? { revoked_sessions: revokedSessions } : {},
    });
    return { identity: toIdentity(updated), revoked_sessions: revokedSessions };
  });
}
