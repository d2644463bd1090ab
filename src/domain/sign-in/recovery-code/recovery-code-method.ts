import type { Clock } from '../../../lib/clock.js';
import { validationError } from '../../errors.js';
import { matchRecoveryCode } from '../../second-factor/recovery-codes.js';
import type { Store } from '../../store.js';
import type { SecondFactorMethod, SecondFactorOutcome } from '../second-factor.js';

export interface RecoveryCodeInput {
  recovery_code: string;
}

export interface RecoveryCodeMethodDeps {
  store: Pick<Store, 'findTotpFactor' | 'listUnusedRecoveryCodes'>;
  clock: Clock;
}

/**
 * One of the ten codes shown when the authenticator was confirmed, for when the phone is
 * not at hand. Each signs in once: it is marked used in one conditional UPDATE, in the
 * transaction that mints (the redemption), so of two sign-ins racing with it only one
 * gets through, and a submission that loses its flow to a racing one spends nothing.
 */
export const recoveryCodeMethod = {
  id: 'recovery_code',

  parse(fields) {
    const { recovery_code: code } = fields;
    if (typeof code !== 'string') throw validationError('recovery_code is required');
    return { recovery_code: code };
  },

  async verify(deps, identity, input): Promise<SecondFactorOutcome> {
    const failure = { failure: 'invalid_credentials' } as const;
    // Codes belong to a confirmed authenticator; an operator's reset removes both.
    const factor = await deps.store.findTotpFactor(identity.id);
    if (!factor || factor.confirmed_at === null) return failure;
    const unused = await deps.store.listUnusedRecoveryCodes(identity.id);
    const match = matchRecoveryCode(unused, input.recovery_code);
    if (!match) return failure;
    const now = deps.clock.now();
    return { redeem: (tx) => tx.useRecoveryCode(identity.id, match.code_hash, now) };
  },
} as const satisfies SecondFactorMethod<'recovery_code', RecoveryCodeInput, RecoveryCodeMethodDeps>;
