import type { Clock } from '../../../lib/clock.js';
import type { RateLimitRule } from '../../../lib/rate.js';
import type { SecretBox } from '../../../lib/secret-box.js';
import { validationError } from '../../errors.js';
import { parseEmail, requireEmail } from '../../identities/email.js';
import type { IdentityRecord } from '../../identities/identity.js';
import { CODE_DIGITS } from '../../mail-codes/mail-code.js';
import { MAIL_CODE_SETTINGS, isMailCodeOpen, proofMatches } from '../../mail-codes/mail-codes.js';
import type { Store } from '../../store.js';
import type { SignInMethod, SignInOutcome } from '../method.js';
import { requestSignInCode } from './sign-in-code.js';

export interface EmailCodeMethodDeps {
  store: Pick<
    Store,
    'findIdentityByEmail' | 'listPendingMailCodes' | 'countMailCodeAttempt' | 'transaction'
  >;
  clock: Clock;
  secretBox: Pick<SecretBox, 'mac' | 'verifyMac'>;
  usernameRule: RateLimitRule;
  /** SERVICE_SIGN_IN_EMAIL_CODE: off, and the method is no route and no offer. */
  signInEmailCode: boolean;
}

export interface EmailCodeInput {
  address: string;
  code: string;
}

const MISSING_CODE = 'address and code are required';
const MISSING_ADDRESS = 'address (the email address to send the code to) is required';

/**
 * Whether `identity` signs in by a code mailed to `address`: active, and `address` is its
 * verified address (an unverified one may be a stranger's: mail to it proves nothing).
 */
export function signsInByCode(
  identity: IdentityRecord | undefined,
  address: string,
): identity is IdentityRecord {
  return (
    identity !== undefined &&
    identity.state === 'active' &&
    identity.email === address &&
    identity.email_verified_at !== null
  );
}

/**
 * A one-time code mailed to the identity's verified address (docs/email-code.md): the
 * challenge mails it, the submission with the address and the code signs in at `aal1`,
 * followed by the identity's second factor if it has one, like a password.
 *
 * The code is a mailed code of purpose `sign_in` (mail-codes/): MAC-hashed, expiring,
 * capped at wrong attempts, limited in sends per identity, and used up by a conditional
 * UPDATE in the transaction that mints. It belongs to the identity, not to the flow that
 * asked for it: whoever reads the mail can use it in any flow, as a phished code could be
 * used in the phisher's own flow anyway; the code's own attempt cap bounds guesses across
 * flows.
 *
 * Nothing the client sees tells a known address from an unknown one: the challenge answers
 * the same, and mails only a verified address of an active identity; a submission for an
 * unknown address is `invalid_credentials` like a wrong code.
 */
export const emailCodeMethod = {
  id: 'email_code',
  assurance: 'aal1',

  available(deps) {
    return deps.signInEmailCode;
  },

  parse(fields) {
    const { address, code } = fields;
    if (typeof address !== 'string' || typeof code !== 'string') {
      throw validationError(MISSING_CODE, 'missing_code');
    }
    return { address, code };
  },

  claim() {
    // The address stays out of the audit trail, as verification keeps it out; the row
    // names the identity once a known address named one.
    return {};
  },

  limits(deps, input) {
    // Per address, so per identity (an address names at most one), like a password's per
    // username; text that is no address matches no one and is not counted.
    const address = parseEmail(input.address);
    return address === null ? [] : [{ key: `auth:email:${address}`, rule: deps.usernameRule }];
  },

  async challenge(deps, context, fields) {
    const raw = fields.address;
    if (typeof raw !== 'string') throw validationError(MISSING_ADDRESS, 'missing_address');
    const address = requireEmail(raw, 'address');
    const identity = await deps.store.findIdentityByEmail(address);
    const recipient = signsInByCode(identity, address) ? identity : undefined;
    await requestSignInCode(deps, address, recipient, context.locale);
    // The same answer whether a mail went out or not.
    return { address, code_length: CODE_DIGITS };
  },

  async authenticate(deps, input, notes): Promise<SignInOutcome> {
    const address = parseEmail(input.address);
    const identity = address === null ? undefined : await deps.store.findIdentityByEmail(address);
    if (identity) notes.identityId = identity.id;
    if (!identity || address === null || identity.email !== address) {
      return { failure: 'invalid_credentials' };
    }
    const now = deps.clock.now();
    const [code] = await deps.store.listPendingMailCodes(identity.id, 'sign_in');
    if (!code || code.address !== address || !isMailCodeOpen(code, now)) {
      return { failure: 'invalid_credentials' };
    }
    if (!proofMatches(deps, code, { code: input.code })) {
      // Counted on the code too: its cap bounds the guesses at it across every flow.
      await deps.store.countMailCodeAttempt(code.id, MAIL_CODE_SETTINGS.maxAttempts);
      return { failure: 'invalid_credentials' };
    }
    if (identity.state !== 'active') return { failure: 'identity_disabled' };
    return {
      identity,
      // Used up where the session is minted: of racing right submissions (on one flow or
      // several, in any process) exactly one uses it. The address must still be the
      // identity's, verified: a change since the mail makes the code worthless.
      async redeem(tx) {
        if (!(await tx.useMailCode(code.id, deps.clock.now()))) return false;
        const current = await tx.findIdentityById(identity.id);
        return current !== undefined && signsInByCode(current, address);
      },
    };
  },
} as const satisfies SignInMethod<'email_code', EmailCodeInput, EmailCodeMethodDeps>;
