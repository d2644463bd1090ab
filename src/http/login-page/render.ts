import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { Session } from '../../domain/sessions/session.js';
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

export function layout(title: string, body: string): string {
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
</body>
</html>
`;
}

export interface LoginFormInput {
  flow: FlowRecord;
  /** A sentence for the user; shown above the form and announced by screen readers. */
  error?: string;
  /** Kept after a failed attempt so only the password has to be typed again. */
  username?: string;
}

/** Where the user goes after signing in, named so a look-alike link is easier to spot. */
function destination(flow: FlowRecord): string {
  if (!flow.return_to) return '';
  const host = new URL(flow.return_to).host;
  return `<p class="note muted">After signing in you will continue to <strong>${escapeHtml(host)}</strong>.</p>`;
}

export function loginPage({ flow, error, username }: LoginFormInput): string {
  const invalid = error ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const alert = error
    ? `<div class="error" id="form-error" role="alert">${escapeHtml(error)}</div>\n`
    : '';
  const prefilled = username ? ` value="${escapeHtml(username)}"` : '';
  const focusUser = username ? '' : ' autofocus';
  const focusPassword = username ? ' autofocus' : '';
  return layout(
    'Sign in',
    `<h1>Sign in</h1>
${alert}<form method="post" action="/v1/flows/${escapeHtml(flow.id)}/password">
<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required${prefilled}${invalid}${focusUser}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${invalid}${focusPassword}>
<button type="submit">Sign in</button>
</form>
${destination(flow)}`,
  );
}

export function signedInPage(session: Session): string {
  const { display_name: name, username } = session.identity;
  return layout(
    'Signed in',
    `<h1>Signed in</h1>
<p>You are signed in as <strong>${escapeHtml(name)}</strong> (${escapeHtml(username)}).</p>
<p class="muted">You can close this page.</p>`,
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
