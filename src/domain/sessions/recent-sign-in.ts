import { DomainError } from '../errors.js';

/**
 * Credential changes (a passkey added or removed, a second factor enabled or disabled, a
 * password set without the current one) need a sign-in within the privileged window
 * (SERVICE_PRIVILEGED_WINDOW_MINUTES): a session left open on a shared computer, or a
 * stolen cookie, must not be enough to take the account over for good.
 *
 * `signedInAt` is when the session's sign-in happened (its `issued_at`, epoch ms).
 * Refused with 403 `forbidden` and a message telling the user to sign in again; the hosted
 * pages send the browser through a login flow and back.
 */
export function requireRecentSignIn(signedInAt: number, now: number, windowMs: number): void {
  if (isRecentSignIn(signedInAt, now, windowMs)) return;
  const minutes = Math.round(windowMs / 60_000);
  throw new DomainError(
    'forbidden',
    `This change needs a recent sign-in: sign in again, then retry within ${minutes} minutes.`,
    { reason: 'recent_sign_in_required' },
  );
}

export function isRecentSignIn(signedInAt: number, now: number, windowMs: number): boolean {
  return now - signedInAt <= windowMs;
}
