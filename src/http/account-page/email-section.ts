import type { Identity } from '../../domain/identities/identity.js';
import { escapeHtml } from '../login-page/render.js';

/**
 * The account page's email section: the address and whether it is confirmed, and the form
 * that asks to change it (POST /v1/account/email, then the verification page).
 */
export function emailSection(identity: Identity, csrfToken: string): string {
  const current =
    identity.email === null
      ? '<p class="muted">No email address yet.</p>'
      : `<p>${escapeHtml(identity.email)} <span class="badge">${identity.email_verified ? 'Confirmed' : 'Not confirmed'}</span></p>`;
  return `<section aria-labelledby="email-heading">
<h2 id="email-heading">Email address</h2>
${current}
<form method="post" action="/v1/account/email">
<input type="hidden" name="csrf_token" value="${escapeHtml(csrfToken)}">
<label for="email">New email address</label>
<input id="email" name="email" type="email" autocomplete="email" required aria-describedby="email-hint">
<span class="hint" id="email-hint">We mail a code to the new address; it replaces the current one once you enter the code.</span>
<button type="submit">Change email address</button>
</form>
</section>`;
}
