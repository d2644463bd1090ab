import type { RateLimitRule } from '../../lib/rate.js';
import type { Actor } from '../audit/audit-log.js';
import { DomainError } from '../errors.js';
import { type IdentityDeps } from '../identities/identity-service.js';
import { type IdentityRecord, parseUsername } from '../identities/identity.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import { mintSession } from '../sessions/session-service.js';
import type { MintedSession } from '../sessions/session.js';
import { replaceImportedHash } from './rehash.js';

export interface PasswordAuthDeps extends IdentityDeps {
  usernameRule: RateLimitRule;
}

/**
 * Checks a username and password. Unknown users, malformed usernames and wrong passwords
 * all cost one argon2 verification and end in the same `invalid_credentials`; only after a
 * correct password may the caller learn that the identity is disabled.
 * The caller must have counted the attempt (`consumeUsernameLimit`) first. `seen` learns
 * which identity the username named, for the caller's audit row (never for the answer).
 */
export async function checkPassword(
  deps: IdentityDeps,
  rawUsername: string,
  password: string,
  seen?: { identityId: string | null },
): Promise<IdentityRecord> {
  const username = parseUsername(rawUsername);
  const identity =
    username === null ? undefined : await deps.store.findIdentityByUsername(username);
  if (seen && identity) seen.identityId = identity.id;
  const ok = identity?.password_hash
    ? await deps.hasher.verify(identity.password_hash, password)
    : await deps.hasher.verifyDummy(password);
  if (!identity || !ok) throw new DomainError('invalid_credentials');
  if (identity.state !== 'active') throw new DomainError('identity_disabled');
  await replaceImportedHash(deps, identity, password); // issue 14: imported hashes
  return identity;
}

/**
 * Every attempt counts against the username, successful ones too (API-DECISIONS 3). A name
 * that breaks the username rule matches no account, so it is not counted: that keeps
 * arbitrary attacker-chosen text (up to the body limit) out of the counter table.
 */
export async function consumeUsernameLimit(
  deps: PasswordAuthDeps,
  rawUsername: string,
): Promise<void> {
  const username = parseUsername(rawUsername);
  if (username === null) return;
  await consumeRateLimit(deps.store, deps.clock, `auth:user:${username}`, deps.usernameRule);
}

/** POST /v1/authenticate/password: limit, verify, mint, audit. */
export async function authenticateWithPassword(
  deps: PasswordAuthDeps,
  actor: Actor,
  input: { username: string; password: string },
): Promise<MintedSession> {
  await consumeUsernameLimit(deps, input.username);
  const identity = await checkPassword(deps, input.username, input.password);
  return deps.store.transaction(async (tx) => {
    const minted = await mintSession(deps, tx, identity, 'password');
    await deps.audit.write(tx, actor, {
      action: 'authenticate_password',
      target_identity: identity.id,
      details: { session_id: minted.session.id },
    });
    return minted;
  });
}
