import type { Clock } from '../../../lib/clock.js';
import type { SecretBox } from '../../../lib/secret-box.js';
import { DomainError } from '../../errors.js';
import type { IdentityRecord } from '../../identities/identity.js';
import { enqueueMail } from '../../mail/message.js';
import { MAIL_CODE_SETTINGS, issueMailCode } from '../../mail-codes/mail-codes.js';
import { consumeRateLimit } from '../../rate-limit/rate-limiter.js';
import type { Store } from '../../store.js';

/**
 * One request for a sign-in code to `address`, for every address alike: one transaction
 * that counts the request against the address (the mailed codes' send limit), and, when
 * `identity` is given (the address is its verified one), makes a `sign_in` code for it and
 * queues its `sign_in_code` mail. The code exists exactly when its mail will be sent, and
 * replaces the identity's earlier sign-in code.
 *
 * Every address costs a write transaction, so that a known one does not stand out by a
 * commit (an fsync on SQLite) that an unknown one lacks. Past the address's or the
 * identity's send limit nothing is made or sent, and nothing is said: a refusal here would
 * tell that the address has an account. The user still has the codes already sent.
 */
export async function requestSignInCode(
  deps: {
    store: Pick<Store, 'transaction'>;
    clock: Clock;
    secretBox: Pick<SecretBox, 'mac' | 'verifyMac'>;
  },
  address: string,
  identity: IdentityRecord | undefined,
  locale: string | undefined,
): Promise<void> {
  try {
    await deps.store.transaction(async (tx) => {
      await consumeRateLimit(
        tx,
        deps.clock,
        `mail-code:sign_in:address:${address}`,
        MAIL_CODE_SETTINGS.sendRule,
      );
      if (!identity) return;
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
