import type { Clock } from '../../../lib/clock.js';
import type { SecretBox } from '../../../lib/secret-box.js';
import { DomainError } from '../../errors.js';
import type { IdentityRecord } from '../../identities/identity.js';
import { enqueueMail } from '../../mail/message.js';
import { issueMailCode } from '../../mail-codes/mail-codes.js';
import type { Store } from '../../store.js';

/**
 * Makes a `sign_in` code for the identity's verified `address` and queues its
 * `sign_in_code` mail, in one transaction: the code exists exactly when its mail will be
 * sent, and replaces the identity's earlier sign-in code.
 *
 * Past the per-identity send limit nothing is made or sent, and nothing is said: a refusal
 * here would tell that the address has an account (the challenge answers every address
 * alike). The user still has the codes already sent.
 */
export async function mailSignInCode(
  deps: {
    store: Pick<Store, 'transaction'>;
    clock: Clock;
    secretBox: Pick<SecretBox, 'mac' | 'verifyMac'>;
  },
  identity: IdentityRecord,
  address: string,
  locale: string | undefined,
): Promise<void> {
  try {
    await deps.store.transaction(async (tx) => {
      const issued = await issueMailCode({ ...deps, store: tx }, tx, {
        purpose: 'sign_in',
        identityId: identity.id,
        address,
      });
      await enqueueMail(tx, deps.clock, {
        to: address,
        template: 'sign_in_code',
        ...(locale === undefined ? {} : { locale }),
        variables: { code: issued.code },
      });
    });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'rate_limited') return;
    throw error;
  }
}
