import type { Identity } from '../../domain/identities/identity.js';
import { type PendingEmail, emailSection } from './email-section.js';
import { escapeHtml } from '../login-page/render.js';
import { signOutForm } from '../login-page/sign-out.js';
import type { SessionListItem } from '../session-list.js';
import { ACCOUNT_STYLES } from './styles.js';

/** Where the page's forms post; the JSON API answers at the same paths. */
export const ACCOUNT_PATHS = {
  page: '/v1/account',
  profile: '/v1/account/profile',
  password: '/v1/account/password',
  revokeOthers: '/v1/account/sessions/revoke-others',
  revoke: (id: string) => `/v1/account/sessions/${id}/revoke`,
  // Built by the passkeys and second-factor pages.
  passkeys: '/v1/account/passkeys',
  twoFactor: '/v1/account/two-factor',
} as const;

export interface AccountPageInput {
  identity: Identity;
  /** False for an identity created by link sign-in that never set one. */
  hasPassword: boolean;
  sessions: (SessionListItem & { current: boolean })[];
  csrfToken: string;
  /** Until when (epoch ms) the current password is not needed; null when that has passed. */
  recentUntil: number | null;
  /**
   * The session is aal1 beside a second factor or passkey: a password is set without the
   * current one only after a sign-in with that factor, which the section then offers.
   */
  stepUpUrl: string | null;
  /** The address waiting for its mailed code (an open verification), with the code's id. */
  pendingEmail: PendingEmail | null;
  /** A success sentence after a form post (role=status). */
  notice?: string;
  /** A failure sentence (role=alert), with the form it is about. */
  error?: { message: string; form: 'profile' | 'password' | 'sessions' };
  /** What the user typed into the profile form, kept after a refused save. */
  profileDraft?: { display_name?: string; avatar_url?: string };
}

/** `2026-11-23 14:05 UTC`: readable without script; the `datetime` attribute keeps the exact time. */
function when(iso: string | null): string {
  if (iso === null) return 'unknown';
  const text = `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return `<time datetime="${escapeHtml(iso)}">${text}</time>`;
}

function deviceName(session: SessionListItem): string {
  if (session.browser && session.os) return `${session.browser} on ${session.os}`;
  return session.browser ?? session.os ?? 'Unknown device';
}

function csrf(token: string): string {
  return `<input type="hidden" name="csrf_token" value="${escapeHtml(token)}">`;
}

function alert(input: AccountPageInput, form: 'profile' | 'password' | 'sessions'): string {
  if (input.error?.form !== form) return '';
  return `<div class="error" id="${form}-error" role="alert">${escapeHtml(input.error.message)}</div>\n`;
}

function profileSection(input: AccountPageInput): string {
  const name = input.profileDraft?.display_name ?? input.identity.display_name;
  const avatar = input.profileDraft?.avatar_url ?? input.identity.avatar_url ?? '';
  const invalid = input.error?.form === 'profile' ? ' aria-describedby="profile-error"' : '';
  return `<section aria-labelledby="profile-heading">
<h2 id="profile-heading">Profile</h2>
${alert(input, 'profile')}<form method="post" action="${ACCOUNT_PATHS.profile}">
${csrf(input.csrfToken)}
<label for="display_name">Display name</label>
<input id="display_name" name="display_name" type="text" autocomplete="name" required value="${escapeHtml(name)}"${invalid}>
<label for="avatar_url">Avatar URL</label>
<input id="avatar_url" name="avatar_url" type="url" autocomplete="photo" value="${escapeHtml(avatar)}" aria-describedby="avatar-hint">
<span class="hint" id="avatar-hint">An https address of a picture; leave empty for none.</span>
<button type="submit">Save profile</button>
</form>
</section>`;
}

/** Why the password cannot be set without the current one yet, and the sign-in that allows it. */
function stepUpPrompt(url: string): string {
  return `<p class="muted" id="step-up">Without the current password, this needs a sign-in with your second factor: <a href="${escapeHtml(url)}" id="step-up-link">sign in again with a passkey or your authenticator app</a>.</p>`;
}

function passwordSection(input: AccountPageInput): string {
  const title = input.hasPassword ? 'Change password' : 'Set a password';
  const heading = `<h2 id="password-heading">${title}</h2>\n${alert(input, 'password')}`;
  if (!input.hasPassword && input.stepUpUrl) {
    // No current password to give: the form could only be refused, so the prompt replaces it.
    return `<section aria-labelledby="password-heading">
${heading}<p class="muted">This account has no password yet.</p>
${stepUpPrompt(input.stepUpUrl)}
</section>`;
  }
  const recent =
    input.recentUntil === null
      ? ''
      : ` You signed in recently, so until ${when(new Date(input.recentUntil).toISOString())} it is not needed.`;
  const current = input.hasPassword
    ? `<label for="current_password">Current password</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" aria-describedby="current-hint"${input.recentUntil === null ? ' required' : ''}>
<span class="hint" id="current-hint">Proves it is you.${recent}</span>${input.stepUpUrl ? `\n${stepUpPrompt(input.stepUpUrl)}` : ''}`
    : `<p class="muted">This account has no password yet.${
        input.recentUntil === null
          ? ' To set one, sign in again (for example through your sign-in link), then come back within a few minutes.'
          : ` You signed in recently, so you can set one until ${when(new Date(input.recentUntil).toISOString())}.`
      }</p>`;
  return `<section aria-labelledby="password-heading">
${heading}<form method="post" action="${ACCOUNT_PATHS.password}">
${csrf(input.csrfToken)}
${current}
<label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" required>
<label for="new_password_confirm">New password again</label>
<input id="new_password_confirm" name="new_password_confirm" type="password" autocomplete="new-password" required>
<label class="check"><input type="checkbox" name="revoke_other_sessions" value="true" checked> Sign out my other sessions</label>
<button type="submit">${title}</button>
</form>
</section>`;
}

function sessionItem(session: SessionListItem & { current: boolean }, token: string): string {
  const name = deviceName(session);
  const badge = session.current ? '<span class="badge">This device</span>' : '';
  const end = session.current
    ? ''
    : `\n<form class="inline" method="post" action="${ACCOUNT_PATHS.revoke(escapeHtml(session.id))}">
${csrf(token)}
<button type="submit" class="secondary" aria-label="End the session on ${escapeHtml(name)}, started ${escapeHtml(session.issued_at.slice(0, 16).replace('T', ' '))} UTC">End session</button>
</form>`;
  return `<li${session.current ? ' aria-current="true"' : ''}>
<p><strong>${escapeHtml(name)}</strong>${badge}</p>
<p class="muted">Address: ${escapeHtml(session.client_address ?? 'unknown')} · Signed in: ${when(session.issued_at)} · Last used: ${when(session.last_used_at)}</p>${end}
</li>`;
}

function sessionsSection(input: AccountPageInput): string {
  const others = input.sessions.filter((session) => !session.current).length;
  const endOthers =
    others === 0
      ? '<p class="muted">You are signed in on this device only.</p>'
      : `<form method="post" action="${ACCOUNT_PATHS.revokeOthers}">
${csrf(input.csrfToken)}
<button type="submit" class="danger">End all other sessions (${others})</button>
</form>`;
  return `<section aria-labelledby="sessions-heading">
<h2 id="sessions-heading">Where you are signed in</h2>
${alert(input, 'sessions')}<ul class="sessions">
${input.sessions.map((session) => sessionItem(session, input.csrfToken)).join('\n')}
</ul>
${endOthers}
</section>`;
}

export function accountPage(input: AccountPageInput): string {
  const { display_name: name, username } = input.identity;
  const notice = input.notice
    ? `<div class="notice" role="status">${escapeHtml(input.notice)}</div>\n`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Your account · Tessera</title>
<style>${ACCOUNT_STYLES}</style>
</head>
<body>
<main class="wide">
${signOutForm()}
<h1>Your account</h1>
${notice}<p>Signed in as <strong>${escapeHtml(name)}</strong> (${escapeHtml(username)}).</p>
<nav aria-label="Account settings"><ul>
<li><a href="${ACCOUNT_PATHS.passkeys}">Passkeys</a></li>
<li><a href="${ACCOUNT_PATHS.twoFactor}">Two-factor authentication</a></li>
<li><a href="/v1/account/connections">Connected accounts</a></li>
</ul></nav>
${profileSection(input)}
${emailSection(input.identity, input.csrfToken, input.pendingEmail)}
${passwordSection(input)}
${sessionsSection(input)}
</main>
</body>
</html>
`;
}
