import type { Clock } from '../../lib/clock.js';
import type { RateLimitRule } from '../../lib/rate.js';
import type { IdentityRecord } from '../identities/identity.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import type { Store } from '../store.js';
import type { CredentialFailure, Redemption } from './method.js';

/**
 * A right code is not yet used: `redeem` uses it up inside the transaction that mints
 * (completeSignIn), so only the submission that gets to mint spends it.
 */
export type SecondFactorOutcome = { redeem: Redemption } | { failure: CredentialFailure };

/**
 * A second factor: proves that the identity a first factor already named is present a
 * second, different way (NIST SP 800-63B), so a sign-in completed with it reaches `aal2`.
 * Like a first factor it knows nothing of flows or sessions; unlike one it does not name
 * the identity: the flow (or the direct sign-in) hands it the identity to check.
 */
export interface SecondFactorMethod<Id extends string, Input, Deps> {
  /** The route suffix (`/v1/flows/{id}/<id>`) and the name in a flow's `second_factor.methods`. */
  readonly id: Id;
  /** The submitted fields as this method's input, or `validation_error`. No I/O. */
  parse(fields: Readonly<Record<string, unknown>>): Input;
  /**
   * Checks the code without using it up (see `SecondFactorOutcome`). A credential failure
   * is counted to the flow's cap; other refusals are thrown.
   */
  verify(deps: Deps, identity: IdentityRecord, input: Input): Promise<SecondFactorOutcome>;
}

export interface SecondFactorLimitDeps {
  store: Pick<Store, 'hitRateLimit'>;
  clock: Clock;
  /** SERVICE_RATE_LIMIT_SECOND_FACTOR: second-factor codes per identity, wherever submitted. */
  secondFactorRule: RateLimitRule;
}

/**
 * Every second-factor attempt counts against the identity (successful ones too, like the
 * per-username limit), whether it comes through a flow, a direct sign-in or the account
 * page's confirmation: a six-digit code must not be guessable by spreading tries across flows.
 */
export function consumeSecondFactorLimit(
  deps: SecondFactorLimitDeps,
  identityId: string,
): Promise<void> {
  return consumeRateLimit(
    deps.store,
    deps.clock,
    `second-factor:identity:${identityId}`,
    deps.secondFactorRule,
  );
}

/**
 * The message of the 403 `forbidden` a client gets where a second factor is still needed:
 * nothing was minted, and the flow (if any) now waits in `second_factor_required`.
 */
export const SECOND_FACTOR_REQUIRED =
  'This account has a second factor: the sign-in needs a code (docs/two-factor.md).';
