import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { Session } from '../../domain/sessions/session.js';
import { LOGIN_SCRIPTS } from '../assets.js';
import { type LoginOffers, NO_OFFERS } from './offers.js';
import { signOutForm } from './sign-out.js';
import { STYLES } from './styles.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Every interpolated value goes through this: text and attribute values alike. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/** Our own scripts, by URL (versioned: they are cached for a year), at the end of the body. */
export function layout(title: string, body: string, scripts: readonly string[] = []): string {
  const tags = scripts.map((src) => `<script src="${escapeHtml(src)}"></script>\n`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Tessera</title>
<style>${STYLES}</style>
</head>
<body>
<main>
${body}
</main>
${tags}</body>
</html>
`;
}

export interface LoginFormInput {
  flow: FlowRecord;
  /** A sentence for the user; shown above the form and announced by screen readers. */
  error?: string;
  /** Kept after a failed attempt so only the password has to be typed again. */
  username?: string;
  /** The browser's valid session, if it has one: the page says so and offers to sign out. */
  signedIn?: Session;
  /** The other ways in and the links the page offers (offers.ts). */
  offers?: LoginOffers;
}

/** Where the user goes after signing in, named so a look-alike link is easier to spot. */
export function destination(flow: FlowRecord): string {
  if (!flow.return_to) return '';
  const host = new URL(flow.return_to).host;
  return `<p class="note muted">After signing in you will continue to <strong>${escapeHtml(host)}</strong>.</p>`;
}

/** Signing in again replaces the session in the cookie: how to switch to another account. */
function alreadySignedIn(session: Session | undefined): string {
  if (!session) return '';
  const { display_name: name, username } = session.identity;
  return `<p class="notice" id="signed-in-as">You are signed in as <strong>${escapeHtml(name)}</strong> (${escapeHtml(username)}). Sign in below to use another account.</p>
`;
}

function renderOffers({ alternatives, links }: LoginOffers): string {
  const blocks = alternatives.map((block) => `<p class="or">or</p>\n${block}\n`).join('');
  const list = links.length ? `<p class="note">${links.join(' · ')}</p>\n` : '';
  return blocks + list;
}

export function loginPage({
  flow,
  error,
  username,
  signedIn,
  offers = NO_OFFERS,
}: LoginFormInput): string {
  const invalid = error ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const alert = error
    ? `<div class="error" id="form-error" role="alert">${escapeHtml(error)}</div>\n`
    : '';
  const prefilled = username ? ` value="${escapeHtml(username)}"` : '';
  const focusUser = username ? '' : ' autofocus';
  const focusPassword = username ? ' autofocus' : '';
  return layout(
    'Sign in',
    `${signedIn ? `${signOutForm()}\n` : ''}<h1>Sign in</h1>
${alreadySignedIn(signedIn)}${alert}<form method="post" action="/v1/flows/${escapeHtml(flow.id)}/password">
<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username webauthn" autocapitalize="none" spellcheck="false" required${prefilled}${invalid}${focusUser}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${invalid}${focusPassword}>
<button type="submit">Sign in</button>
</form>
<div id="passkey" data-flow="${escapeHtml(flow.id)}" data-csrf="${escapeHtml(flow.csrf_token)}" hidden>
<p class="or">or</p>
<button type="button" id="passkey-button" class="secondary">Use a passkey</button>
<p id="passkey-status" class="note muted" role="status"></p>
</div>
${renderOffers(offers)}${destination(flow)}`,
    LOGIN_SCRIPTS,
  );
}

export function signedInPage(session: Session): string {
  const { display_name: name, username } = session.identity;
  return layout(
    'Signed in',
    `${signOutForm()}
<h1>Signed in</h1>
<p>You are signed in as <strong>${escapeHtml(name)}</strong> (${escapeHtml(username)}).</p>
<p class="muted">You can close this page.</p>`,
  );
}

/** What `POST /v1/logout` answers a navigating browser's form post. */
export function signedOutPage(): string {
  return layout(
    'Signed out',
    `<h1>Signed out</h1>
<p>You are signed out of Tessera on this browser.</p>
<p><a href="/v1/login">Sign in again</a></p>`,
  );
}

export interface MessagePageInput {
  title: string;
  message: string;
  /** Link to a fresh sign-in form, when starting again can help. */
  restartUrl?: string;
}

export function messagePage({ title, message, restartUrl }: MessagePageInput): string {
  const restart = restartUrl ? `\n<p><a href="${escapeHtml(restartUrl)}">Start again</a></p>` : '';
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>
<div class="error" role="alert">${escapeHtml(message)}</div>${restart}`,
  );
}
