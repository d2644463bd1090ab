import type { Identity } from '../../domain/identities/identity.js';
import { escapeHtml } from '../login-page/render.js';

/** An address waiting for its mailed code, and the code's id (its verification page). */
export interface PendingEmail {
  address: string;
  codeId: string;
}

/**
 * The account page's email section: the address and whether it is confirmed, an address
 * waiting for its code (the mail may be lost in a spam folder: the page links to where the
 * code is entered and a new one can be sent), and the form that asks to change it
 * (POST /v1/account/email, then the verification page).
 */
export function emailSection(
  identity: Identity,
  csrfToken: string,
  pending: PendingEmail | null,
): string {
  const current =
    identity.email === null
      ? '<p class="muted">No email address yet.</p>'
      : `<p>${escapeHtml(identity.email)} <span class="badge">${identity.email_verified ? 'Confirmed' : 'Not confirmed'}</span></p>`;
  const link = pending ? `/v1/verification?id=${encodeURIComponent(pending.codeId)}` : '';
  const waiting = pending
    ? `<p class="notice" id="pending-email">A code was mailed to <strong>${escapeHtml(pending.address)}</strong>${pending.address === identity.email ? ' to confirm it' : '; it replaces the current address once confirmed'}. <a href="${escapeHtml(link)}">Enter the code</a></p>\n`
    : '';
  return `<section aria-labelledby="email-heading">
<h2 id="email-heading">Email address</h2>
${current}
${waiting}<form method="post" action="/v1/account/email">
<input type="hidden" name="csrf_token" value="${escapeHtml(csrfToken)}">
<label for="email">New email address</label>
<input id="email" name="email" type="email" autocomplete="email" required aria-describedby="email-hint">
<span class="hint" id="email-hint">We mail a code to the new address; it replaces the current one once you enter the code.</span>
<button type="submit">Change email address</button>
</form>
</section>`;
}
