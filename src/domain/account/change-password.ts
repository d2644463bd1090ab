import type { RateLimitRule } from '../../lib/rate.js';
import type { Actor } from '../audit/audit-log.js';
import { DomainError, validationError } from '../errors.js';
import {
  type PasswordChange,
  type SetPasswordDeps,
  setPassword,
} from '../passwords/set-password.js';
import type { NoticeOrigin } from '../notices/notices.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import type { Session } from '../sessions/session.js';
import { type CredentialChangeDeps, requireCredentialChange } from './credential-change.js';

export interface ChangePasswordDeps extends SetPasswordDeps, CredentialChangeDeps {
  store: SetPasswordDeps['store'];
  /** Guesses of the current password count against the username like sign-ins do. */
  usernameRule: RateLimitRule;
}

export interface OwnPasswordChange {
  /** Proves the user knows the password; without it, the change is a credential change. */
  current_password?: string;
  new_password: string;
  /** End the user's other sessions (default true); the session making the change stays. */
  revoke_other_sessions?: boolean;
}

/**
 * The signed-in user sets a new password (docs/account.md). They prove it is them with the
 * current password, or by what every credential change needs (credential-change.ts): a
 * sign-in within the privileged window, with the identity's strongest factor. A link
 * sign-in, where the backend proved control of the email, opens that window for an identity
 * without a second factor, which is how a forgotten password is recovered. A stolen cookie
 * alone (an old session) is not enough, nor is a link sign-in past a second factor.
 *
 * A wrong current password is `invalid_credentials`, counted against the username's sign-in
 * limit, so a session cannot be used to guess the password at leisure.
 */
export async function changeOwnPassword(
  deps: ChangePasswordDeps,
  actor: Actor,
  session: Session,
  input: OwnPasswordChange,
  origin?: NoticeOrigin,
): Promise<PasswordChange> {
  if (input.new_password === '') throw validationError('new_password is required');
  const { identity } = session;
  if (input.current_password === undefined || input.current_password === '') {
    await requireCredentialChange(deps, session);
  } else {
    await consumeRateLimit(
      deps.store,
      deps.clock,
      `auth:user:${identity.username}`,
      deps.usernameRule,
    );
    const stored = await deps.store.findIdentityById(identity.id);
    const ok = stored?.password_hash
      ? await deps.hasher.verify(stored.password_hash, input.current_password)
      : await deps.hasher.verifyDummy(input.current_password);
    if (!ok) throw new DomainError('invalid_credentials');
  }
  return setPassword(deps, actor, identity.id, input.new_password, {
    revokeSessions: input.revoke_other_sessions ?? true,
    keepSession: session.id,
    origin,
  });
}
