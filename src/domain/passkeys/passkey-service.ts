import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { notFound, validationError } from '../errors.js';
import { getIdentity } from '../identities/identity-service.js';
import { requireIdentityId } from '../identities/identity.js';
import { type NoticeOrigin, type NoticeSettings, noticeFor } from '../notices/notices.js';
import type { Session } from '../sessions/session.js';
import type { Store } from '../store.js';
import { UniqueViolation } from '../unique-violation.js';
import { keepChallenge, takeChallenge, userHandleOf } from './challenges.js';
import {
  type Passkey,
  type PasskeyRecord,
  defaultPasskeyName,
  requirePasskeyName,
  toPasskey,
  transportsOf,
} from './passkey.js';
import type { RelyingParty, WebAuthn } from './webauthn.js';

export interface PasskeyDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  webauthn: WebAuthn;
  /** How long a registration challenge lives at most (the flow lifetime); never past its session. */
  challengeTtlMs: number;
  /** Which security notices are on: adding a passkey sends `passkey_added`. */
  notices: NoticeSettings;
}

/** The signed-in user's passkeys, oldest first. */
export async function listOwnPasskeys(
  store: Pick<Store, 'listPasskeys'>,
  identityId: string,
): Promise<Passkey[]> {
  return (await store.listPasskeys(identityId)).map(toPasskey);
}

/**
 * `POST /v1/account/passkeys/options`: creation options for the session's identity, with
 * a challenge bound to the session (a second request replaces it). Discoverable credential
 * and user verification required: the passkey must sign in without a username, and be
 * unlocked by the device's PIN or biometrics.
 */
export async function startPasskeyRegistration(
  deps: Pick<PasskeyDeps, 'store' | 'clock' | 'webauthn' | 'challengeTtlMs'>,
  session: Session,
  rp: RelyingParty,
): Promise<Record<string, unknown>> {
  const { identity } = session;
  const existing = await deps.store.listPasskeys(identity.id);
  const issued = await deps.webauthn.registrationOptions({
    rp,
    userHandle: userHandleOf(identity.id),
    userName: identity.username,
    userDisplayName: identity.display_name,
    exclude: existing.map((record) => ({
      id: record.credential_id,
      transports: transportsOf(record),
    })),
  });
  const expiresAt = Math.min(
    Date.parse(session.expires_at),
    deps.clock.now() + deps.challengeTtlMs,
  );
  await keepChallenge(deps.store, { sessionId: session.id }, issued.challenge, expiresAt);
  return issued.options;
}

export interface PasskeyRegistration {
  credential: unknown;
  name?: unknown;
}

/**
 * `POST /v1/account/passkeys`: verifies the browser's response against the session's
 * challenge (taken, so it serves once) and stores the credential, audited in the same
 * transaction. A response that does not verify is `validation_error`: nothing was stored.
 */
export async function finishPasskeyRegistration(
  deps: PasskeyDeps,
  actor: Actor,
  session: Session,
  rp: RelyingParty,
  input: PasskeyRegistration,
  origin?: NoticeOrigin,
): Promise<Passkey> {
  const now = deps.clock.now();
  const name = input.name === undefined ? defaultPasskeyName(now) : requirePasskeyName(input.name);
  if (typeof input.credential !== 'object' || input.credential === null) {
    throw validationError('credential must be the registration response object');
  }
  const expectedChallenge = await takeChallenge(deps.store, { sessionId: session.id }, now);
  if (!expectedChallenge) {
    throw validationError('no registration in progress: ask for new options and try again');
  }
  const proven = await deps.webauthn.verifyRegistration({
    rp,
    response: input.credential,
    expectedChallenge,
  });
  if (!proven) throw validationError('the passkey could not be verified: try again');
  const record: PasskeyRecord = {
    id: newId(),
    identity_id: session.identity.id,
    credential_id: proven.credentialId,
    public_key: proven.publicKey,
    sign_count: proven.signCount,
    transports: JSON.stringify(proven.transports),
    device_type: proven.deviceType,
    backed_up: proven.backedUp ? 1 : 0,
    name,
    created_at: now,
    last_used_at: null,
  };
  try {
    await deps.store.transaction(async (tx) => {
      await tx.insertPasskey(record);
      await deps.audit.write(tx, actor, {
        action: 'passkey_add',
        target_identity: record.identity_id,
        details: { passkey_id: record.id, name, session_id: session.id },
      });
      // The identity as it stands now: its address may have changed since the sign-in.
      const identity = await tx.findIdentityById(record.identity_id);
      if (identity) await noticeFor(tx, deps, identity, 'passkey_added', origin);
    });
  } catch (error) {
    if (error instanceof UniqueViolation) {
      throw validationError('this passkey is already registered');
    }
    throw error;
  }
  return toPasskey(record);
}

/** `PATCH /v1/account/passkeys/{id}`: a new name for one of the identity's passkeys. */
export async function renamePasskey(
  deps: Pick<PasskeyDeps, 'store' | 'audit'>,
  actor: Actor,
  identityId: string,
  passkeyId: string,
  rawName: unknown,
): Promise<Passkey> {
  const name = requirePasskeyName(rawName);
  return deps.store.transaction(async (tx) => {
    const renamed = await tx.renamePasskey(identityId, requireIdentityId(passkeyId), name);
    if (!renamed) throw notFound();
    await deps.audit.write(tx, actor, {
      action: 'passkey_rename',
      target_identity: identityId,
      details: { passkey_id: passkeyId, name },
    });
    return toPasskey(renamed);
  });
}

/** One passkey of the identity goes (the user's own delete, or an operator's), audited. */
export async function deletePasskey(
  deps: Pick<PasskeyDeps, 'store' | 'audit'>,
  actor: Actor,
  identityId: string,
  passkeyId: string,
): Promise<void> {
  requireIdentityId(identityId);
  // A passkey id is a UUID: anything else names none and never reaches the database.
  requireIdentityId(passkeyId);
  await deps.store.transaction(async (tx) => {
    await getIdentity(tx, identityId);
    if (!(await tx.deletePasskey(identityId, passkeyId))) throw notFound();
    await deps.audit.write(tx, actor, {
      action: 'passkey_delete',
      target_identity: identityId,
      details: { passkey_id: passkeyId },
    });
  });
}

/** `GET /v1/identities/{id}/passkeys`, `tessera identity passkeys`. */
export async function listIdentityPasskeys(store: Store, identityId: string): Promise<Passkey[]> {
  await getIdentity(store, identityId);
  return listOwnPasskeys(store, identityId);
}

/**
 * `DELETE /v1/identities/{id}/passkeys`, `tessera identity reset-passkeys`: the phone was
 * lost. Every passkey of the identity goes, in one audited transaction; the count is
 * recorded and returned (0 is no error: the identity had none).
 */
export async function resetPasskeys(
  deps: Pick<PasskeyDeps, 'store' | 'audit'>,
  actor: Actor,
  identityId: string,
): Promise<{ removed: number }> {
  return deps.store.transaction(async (tx) => {
    await getIdentity(tx, identityId);
    const removed = await tx.deletePasskeys(identityId);
    await deps.audit.write(tx, actor, {
      action: 'passkeys_reset',
      target_identity: identityId,
      details: { removed },
    });
    return { removed };
  });
}
