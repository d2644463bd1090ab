import { randomInt } from 'node:crypto';
import { randomSecret } from '../../lib/tokens.js';

/**
 * What a mailed code proves. `verification`: the recipient holds the address (an address
 * change, later sign-up). `sign_in`: the holder of an identity's verified address signs in
 * (the sign-in method `email_code`, docs/email-code.md). Each purpose has its own codes in
 * the same table, with the same checks.
 */
export type MailCodePurpose = 'verification' | 'sign_in' | 'recovery';

/**
 * `pending` until it is used (`used`), a newer code for the same identity and purpose
 * replaces it (`superseded`), or its wrong attempts reach the cap (`failed`). Expiry is a
 * time, not a state: a pending code past `expires_at` is shown as `expired`.
 */
export type MailCodeState = 'pending' | 'used' | 'superseded' | 'failed';

export interface MailCodeRecord {
  /** `mc_<random>`: names the code in a link and in the verification flow; not a secret. */
  id: string;
  purpose: MailCodePurpose;
  identity_id: string;
  /** The canonical address the code was sent to (for `verification`, the pending one). */
  address: string;
  /** HMAC of the short code under the server key (secretBox.mac), never the code. */
  code_hash: string;
  /** HMAC of the link's long token; the token itself is only in the mail. */
  token_hash: string;
  /** The flow's CSRF token: a submission must carry it (like a login flow's). */
  csrf_token: string;
  state: MailCodeState;
  /** Wrong codes submitted so far; the code closes (`failed`) at the cap. */
  attempts: number;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** How many digits the short code has: typed from a mail, so short, so attempt-capped. */
export const CODE_DIGITS = 6;

/** A fresh code and link token; only their MACs are stored. */
export function newCodeSecrets(): { code: string; token: string } {
  const code = String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
  return { code, token: randomSecret() };
}

export function newMailCodeId(): string {
  return `mc_${randomSecret()}`;
}

/** The MAC contexts: a code's MAC is bound to its row, so it proves nothing for another. */
export const codeContext = (id: string) => `mail-code:${id}`;
export const tokenContext = (id: string) => `mail-code-link:${id}`;

/** What a user typed: digits, spaces and dashes tolerated (`123 456`, `123-456`). */
export function normaliseCode(typed: string): string {
  return typed.replace(/[\s-]/g, '');
}
