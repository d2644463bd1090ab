import type { Clock } from '../../../lib/clock.js';
import type { SecretBox } from '../../../lib/secret-box.js';
import { validationError } from '../../errors.js';
import { type TotpEngine, normalizeTotpCode, totpSecretContext } from '../../second-factor/totp.js';
import type { TotpFactorRecord } from '../../second-factor/second-factor-store.js';
import type { Store } from '../../store.js';
import type { SecondFactorMethod, SecondFactorOutcome } from '../second-factor.js';

export interface TotpInput {
  code: string;
}

export interface TotpMethodDeps {
  store: Pick<Store, 'findTotpFactor' | 'resealTotpSecret'>;
  clock: Clock;
  secretBox: Pick<SecretBox, 'open' | 'seal' | 'isStale'>;
  totp: TotpEngine;
}

/**
 * The factor's secret in the clear, or null when no configured key opens it (tampered,
 * moved to another identity's row, sealed under a key no longer configured). A secret
 * sealed under a previous key is re-sealed under the current one as it is used.
 */
export async function openTotpSecret(
  deps: Pick<TotpMethodDeps, 'store' | 'secretBox'>,
  factor: TotpFactorRecord,
): Promise<string | null> {
  const context = totpSecretContext(factor.identity_id);
  const secret = deps.secretBox.open(factor.secret_sealed, context);
  if (secret !== null && deps.secretBox.isStale(factor.secret_sealed)) {
    const sealed = deps.secretBox.seal(secret, context);
    await deps.store.resealTotpSecret(factor.identity_id, factor.secret_sealed, sealed);
  }
  return secret;
}

/**
 * A six-digit code from an authenticator app (RFC 6238). A code is taken once: its time
 * step is stored (by the redemption, in the minting transaction), and a code of that step
 * or an earlier one is refused (a replay, or the code an onlooker saw); of two sign-ins
 * racing with it, the conditional UPDATE lets one through.
 */
export const totpMethod = {
  id: 'totp',

  parse(fields) {
    const { code } = fields;
    if (typeof code !== 'string') throw validationError('code is required');
    return { code };
  },

  async verify(deps, identity, input): Promise<SecondFactorOutcome> {
    const failure = { failure: 'invalid_credentials' } as const;
    const code = normalizeTotpCode(input.code);
    const factor = await deps.store.findTotpFactor(identity.id);
    if (code === null || !factor || factor.confirmed_at === null) return failure;
    const secret = await openTotpSecret(deps, factor);
    if (secret === null) return failure;
    const step = await deps.totp.verify(secret, code, deps.clock.now(), factor.last_used_step);
    if (step === null) return failure;
    return { redeem: (tx) => tx.useTotpStep(identity.id, step) };
  },
} as const satisfies SecondFactorMethod<'totp', TotpInput, TotpMethodDeps>;
