import type { Actor } from '../../audit/audit-log.js';
import { DomainError, validationError } from '../../errors.js';
import { consumeRateLimits } from '../../rate-limit/rate-limiter.js';
import type { MintedSession, SessionDevice } from '../../sessions/session.js';
import type { Store } from '../../store.js';
import { type CompleteSignInDeps, completeSignIn } from '../complete-sign-in.js';
import type { Assurance } from '../method.js';
import { signInNotes } from '../method.js';
import {
  SECOND_FACTOR_REQUIRED,
  type SecondFactorLimitDeps,
  consumeSecondFactorLimit,
} from '../second-factor.js';
import {
  type SecondFactorMethodDeps,
  directSecondFactor,
  enrolledSecondFactors,
} from '../second-factors.js';
import { type PasswordInput, type PasswordMethodDeps, passwordMethod } from './password-method.js';

export interface AuthenticatePasswordDeps
  extends PasswordMethodDeps, CompleteSignInDeps, SecondFactorLimitDeps, SecondFactorMethodDeps {
  store: PasswordMethodDeps['store'] &
    SecondFactorMethodDeps['store'] &
    Pick<Store, 'transaction' | 'hitRateLimit' | 'hitRateLimits'>;
}

/** The direct sign-in's body: the password, and a second factor where the identity has one. */
export interface DirectPasswordInput extends PasswordInput {
  totp_code?: string;
  recovery_code?: string;
}

/**
 * POST /v1/authenticate/password: the method (limit, verify), then the session and its
 * audit row. An identity with a second factor needs its code in the same request
 * (`totp_code` or `recovery_code`): without one the answer is 403 `forbidden` and nothing
 * is minted; a wrong one is `invalid_credentials`. The session is then `aal2`.
 */
export async function authenticateWithPassword(
  deps: AuthenticatePasswordDeps,
  actor: Actor,
  input: DirectPasswordInput,
  device: SessionDevice,
): Promise<MintedSession> {
  const secondFactor = directSecondFactor(input);
  await consumeRateLimits(deps.store, deps.clock, passwordMethod.limits(deps, input));
  const outcome = await passwordMethod.authenticate(deps, input, signInNotes());
  if ('failure' in outcome) throw new DomainError(outcome.failure);
  const { identity } = outcome;

  let assurance: Assurance = passwordMethod.assurance;
  // Checked inside the minting transaction: the password's hash, then the code, used up.
  const redeem = outcome.redeem ? [outcome.redeem] : [];
  const enrolled = await enrolledSecondFactors(deps.store, identity.id);
  if (enrolled.length > 0) {
    if (!secondFactor) {
      throw new DomainError(
        'forbidden',
        `${SECOND_FACTOR_REQUIRED} Send totp_code (or recovery_code) with the password.`,
      );
    }
    await consumeSecondFactorLimit(deps, identity.id);
    const verified = await secondFactor.method.verify(deps, identity, secondFactor.input);
    if ('failure' in verified) throw new DomainError(verified.failure);
    redeem.push(verified.redeem);
    assurance = 'aal2';
  } else if (secondFactor) {
    throw validationError('this account has no second factor: send the password alone');
  }
  // Past the checks above, a second factor in the body is one that was verified.
  const details = {
    sign_in_method: passwordMethod.id,
    ...(secondFactor ? { second_factor: secondFactor.method.id } : {}),
  };
  return deps.store.transaction((tx) =>
    completeSignIn(
      deps,
      tx,
      identity,
      { id: passwordMethod.id, assurance, redeem },
      { actor, action: 'authenticate_password', details },
      device,
    ),
  );
}
