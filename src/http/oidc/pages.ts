import { escapeHtml, layout } from '../login-page/render.js';
import { signOutForm } from '../login-page/sign-out.js';
import { STYLES_HASH } from '../login-page/styles.js';

/** Scopes as the consent page names them to the user. */
const SCOPE_TEXT: Record<string, string> = {
  openid: 'Know who you are (your Tessera account id)',
  profile: 'See your username, name and picture',
  email: 'See your email address and whether it is verified',
  offline_access: 'Stay signed in to it while you are away',
};

/**
 * The hosted pages' headers (login-page/respond.ts): no script, only the inline stylesheet,
 * and `form-action` for where a form's redirects lead (Chromium checks every hop).
 */
export function pageHeaders(formTargets: readonly string[] = []): Record<string, string> {
  const formAction = ["'self'", ...new Set(formTargets)].join(' ');
  return {
    'content-security-policy': `default-src 'none'; style-src ${STYLES_HASH}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'content-type': 'text/html; charset=utf-8',
  };
}

export interface ConsentInput {
  clientName: string;
  /** Where the application sends users back to, so a look-alike is easier to spot. */
  redirectHost: string;
  scopes: string[];
  username: string;
  action: string;
  csrfToken: string;
}

export function consentPage(input: ConsentInput): string {
  const items = input.scopes
    .map((scope) => `<li>${escapeHtml(SCOPE_TEXT[scope] ?? scope)}</li>`)
    .join('\n');
  return layout(
    'Allow access',
    `${signOutForm()}
<h1>Allow access?</h1>
<p><strong>${escapeHtml(input.clientName)}</strong> (${escapeHtml(input.redirectHost)}) asks to:</p>
<ul>
${items}
</ul>
<p class="muted">Signed in as ${escapeHtml(input.username)}.</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

/**
 * A hop taken by `<meta http-equiv="refresh">` rather than a 303: after the login form's
 * post, Chromium applies that form's `form-action` to every redirect that follows, and the
 * last one leads to the application, an origin the login page cannot know.
 */
export function continuePage(target: string, clientName: string): string {
  const url = escapeHtml(target);
  return layout(
    'Signed in',
    `<h1>Signed in</h1>
<p>Continuing to <strong>${escapeHtml(clientName)}</strong>…</p>
<p><a href="${url}">Continue</a></p>`,
  ).replace(
    '<meta name="robots" content="noindex">',
    (robots) => `${robots}\n<meta http-equiv="refresh" content="0;url=${url}">`,
  );
}

/**
 * RP-initiated logout's question, asked of every browser whatever sent it here. Its form
 * carries the provider's secret for this request (`xsrf`, bound to the provider's session
 * cookie) to the confirm endpoint, so only this page can answer it, and it has no script,
 * so only the user's click does.
 */
export function logoutPage(action: string, xsrf: string, clientName: string | undefined): string {
  const from = clientName ? `<p>Asked by <strong>${escapeHtml(clientName)}</strong>.</p>\n` : '';
  return layout(
    'Sign out',
    `<h1>Sign out?</h1>
<p>Sign out of Tessera on this browser? If you did not ask for this, close the page: nothing
changes until you press the button.</p>
${from}<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(xsrf)}">
<button type="submit" name="logout" value="yes">Sign out</button>
</form>`,
  );
}

export function signedOutPage(): string {
  return layout(
    'Signed out',
    `<h1>Signed out</h1>
<p>You are signed out of Tessera on this browser.</p>
<p class="muted">You can close this page.</p>`,
  );
}

export function problemPage(title: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>
<div class="error" role="alert">${escapeHtml(message)}</div>
<p class="muted">Go back to the application and start again.</p>`,
  );
}
