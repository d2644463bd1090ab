import type { Clock } from '../../../lib/clock.js';
import type { RateLimitRule } from '../../../lib/rate.js';
import { validationError } from '../../errors.js';
import { parseUsername } from '../../identities/identity.js';
import type { PasswordHasher } from '../../passwords/password-hasher.js';
import type { Store } from '../../store.js';
import type { SignInMethod, SignInOutcome } from '../method.js';
import { type RehashDeps, replaceStaleHash } from '../../passwords/rehash.js';
import { verifiedHashStillSet } from '../../passwords/verified-hash.js';

export interface PasswordInput {
  username: string;
  password: string;
}

export interface PasswordMethodDeps extends RehashDeps {
  store: Pick<Store, 'findIdentityByUsername' | 'transaction'>;
  clock: Clock;
  hasher: PasswordHasher;
  usernameRule: RateLimitRule;
}

const MISSING_CREDENTIALS = 'username and password are required';

/**
 * Username and password. Unknown users, malformed usernames and wrong passwords all cost
 * one argon2 verification and end in the same `invalid_credentials`; only after a correct
 * password may the submitter learn that the identity is disabled.
 *
 * Every attempt counts against the username, successful ones too (docs/api.md), through
 * `limits`, which the caller counts before `authenticate`. A name
 * that breaks the username rule matches no account, so it is not counted: that keeps
 * arbitrary attacker-chosen text (up to the body limit) out of the counter table.
 */
export const passwordMethod = {
  id: 'password',
  assurance: 'aal1',

  parse(fields) {
    const { username, password } = fields;
    // Anything but a string (a missing field, a JSON number) is treated as missing.
    if (typeof username !== 'string' || typeof password !== 'string') {
      throw validationError(MISSING_CREDENTIALS, 'missing_credentials');
    }
    return { username, password };
  },

  claim(fields) {
    // Normalised, or null: text that cannot be a username (a password typed into the
    // wrong field, say) is not worth keeping.
    const raw = fields?.username;
    return { username: typeof raw === 'string' ? parseUsername(raw) : null };
  },

  limits(deps, input) {
    // A malformed username is not counted, but still costs one dummy verification in
    // `authenticate`, like any unknown user.
    const username = parseUsername(input.username);
    return username === null ? [] : [{ key: `auth:user:${username}`, rule: deps.usernameRule }];
  },

  async authenticate(deps, input, notes): Promise<SignInOutcome> {
    const username = parseUsername(input.username);
    const identity =
      username === null ? undefined : await deps.store.findIdentityByUsername(username);
    if (identity) notes.identityId = identity.id;
    const ok = identity?.password_hash
      ? await deps.hasher.verify(identity.password_hash, input.password)
      : await deps.hasher.verifyDummy(input.password);
    if (!identity?.password_hash || !ok) return { failure: 'invalid_credentials' };
    if (identity.state !== 'active') return { failure: 'identity_disabled' };
    // An imported hash, or one under an old pepper, becomes one under the current pepper.
    const standing = await replaceStaleHash(deps, identity, identity.password_hash, input.password);
    // The session is minted only if that hash is still the identity's (verified-hash.ts).
    return { identity, redeem: verifiedHashStillSet(identity.id, standing) };
  },
} as const satisfies SignInMethod<'password', PasswordInput, PasswordMethodDeps>;
