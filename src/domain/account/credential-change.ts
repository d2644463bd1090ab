import type { Clock } from '../../lib/clock.js';
import { DomainError } from '../errors.js';
import { requireRecentSignIn } from '../sessions/recent-sign-in.js';
import type { Session } from '../sessions/session.js';
import type { Assurance } from '../sign-in/method.js';
import { enrolledSecondFactors } from '../sign-in/second-factors.js';
import type { Store } from '../store.js';

export interface CredentialChangeDeps {
  store: Pick<Store, 'findTotpFactor' | 'listPasskeys'>;
  clock: Clock;
  /** SERVICE_PRIVILEGED_WINDOW_MINUTES, in ms. */
  privilegedWindowMs: number;
}

/**
 * The strongest assurance the identity can sign in with: `aal2` once it has a confirmed
 * second factor (TOTP) or a passkey, `aal1` otherwise. A pending enrolment signs nobody in,
 * so it does not count.
 */
export async function highestAvailableAssurance(
  store: CredentialChangeDeps['store'],
  identityId: string,
): Promise<Assurance> {
  const [factors, passkeys] = await Promise.all([
    enrolledSecondFactors(store, identityId),
    store.listPasskeys(identityId),
  ]);
  return factors.length > 0 || passkeys.length > 0 ? 'aal2' : 'aal1';
}

/**
 * Whether the session is weaker than its identity allows (Kratos' `highest_available`):
 * an `aal1` session (a password alone, a link sign-in) of an identity that has a second
 * factor or a passkey. Such a session must sign in again with the stronger factor before
 * it changes a credential.
 */
export async function needsStepUp(
  store: CredentialChangeDeps['store'],
  session: Session,
): Promise<boolean> {
  if (session.aal === 'aal2') return false;
  return (await highestAvailableAssurance(store, session.identity.id)) === 'aal2';
}

/**
 * What every credential change of the signed-in user needs (docs/account.md): adding or
 * removing a passkey, enrolling, confirming or turning off TOTP, new recovery codes, a
 * password set without the current one.
 *
 * 1. The strongest sign-in the identity has. A second factor is worthless if a weaker
 *    session can remove it: a link sign-in (the backend vouches for an email or a provider
 *    account, one factor) or a stolen password would otherwise turn TOTP off, or add the
 *    thief's own passkey and sign in with it at `aal2`.
 * 2. A recent sign-in (recent-sign-in.ts): an old session left open is not enough either.
 *
 * Both refusals are 403 `forbidden` with a message saying how to sign in again; the typed
 * reason lets the hosted pages offer the sign-in link.
 *
 * Checked before the change, not inside its transaction: a factor enrolled at the very
 * moment an aal1 session changes something races with that change, but until the factor
 * existed that session was the strongest the identity had, with every right to it.
 */
export async function requireCredentialChange(
  deps: CredentialChangeDeps,
  session: Session,
): Promise<void> {
  if (await needsStepUp(deps.store, session)) {
    throw new DomainError(
      'forbidden',
      'This change needs a sign-in with your second factor: sign in again with a passkey, or with your password and a code from your authenticator app, then retry.',
      { reason: 'second_factor_sign_in_required' },
    );
  }
  requireRecentSignIn(Date.parse(session.issued_at), deps.clock.now(), deps.privilegedWindowMs);
}
