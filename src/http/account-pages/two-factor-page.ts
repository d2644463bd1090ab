import type { SecondFactorStatus } from '../../domain/second-factor/enrolment.js';
import { toIso } from '../../lib/clock.js';
import { escapeHtml, layout } from '../login-page/render.js';
import { signOutForm } from '../login-page/sign-out.js';

export interface TwoFactorPageInput {
  status: SecondFactorStatus;
  /** The account CSRF token every form carries. */
  csrfToken: string;
  /** A started enrolment: the QR code (inline SVG drawn by the server) and the key. */
  enrolment?: { secret: string; otpauthUri: string; qrSvg: string };
  /** Fresh recovery codes: this page is the only time they are shown. */
  recoveryCodes?: readonly string[];
  error?: string;
  notice?: string;
  /** Where to sign in again when a change needs a recent sign-in. */
  signInAgainUrl?: string;
  /**
   * Set when the session is weaker than the identity's strongest factor (aal1 beside a
   * second factor or passkey): every change would be refused, so the page offers this
   * sign-in instead of its forms.
   */
  stepUpUrl?: string;
}

const BASE = '/v1/account/two-factor';

function form(action: string, csrf: string, label: string, fields = '', secondary = false): string {
  return `<form method="post" action="${BASE}${action}">
<input type="hidden" name="csrf_token" value="${escapeHtml(csrf)}">
${fields}<button type="submit"${secondary ? ' class="secondary"' : ''}>${escapeHtml(label)}</button>
</form>`;
}

/** The secret in groups of four, as authenticator apps show it and people type it. */
function groups(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, '$1 ');
}

function codeField(error: boolean): string {
  const invalid = error ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  return `<label for="code">Code from the app</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="16" required autofocus${invalid}>
`;
}

/** In place of the forms, for a session that must sign in with its second factor first. */
function stepUpPrompt(url: string): string {
  return `<p id="step-up">Changing two-step verification needs a sign-in with your second factor.</p>
<p><a href="${escapeHtml(url)}" id="step-up-link">Sign in again with your second factor</a></p>`;
}

function body(input: TwoFactorPageInput): string {
  const { status, csrfToken: csrf } = input;
  if (input.recoveryCodes) {
    const items = input.recoveryCodes.map((code) => `<li><code>${escapeHtml(code)}</code></li>`);
    return `<h2>Your recovery codes</h2>
<p>Each code signs you in once when your authenticator app is not at hand. Save them now (print them, or keep them in a password manager): <strong>they are not shown again</strong>.</p>
<ol class="codes" id="recovery-codes">${items.join('')}</ol>
<p><a href="${BASE}">Done</a></p>`;
  }
  if (input.enrolment) {
    const { secret, otpauthUri, qrSvg } = input.enrolment;
    return `<h2>Set up your authenticator app</h2>
<p>Scan this code with an authenticator app (for example Aegis, Google Authenticator, 1Password):</p>
<div class="qr" role="img" aria-label="QR code of the setup key">${qrSvg}</div>
<p>Or enter this key by hand:</p>
<p><code id="totp-secret" class="key">${escapeHtml(groups(secret))}</code></p>
<p class="muted"><a href="${escapeHtml(otpauthUri)}">Open in an app on this device</a></p>
<p>Then type the code the app shows to finish:</p>
${form('/totp/confirm', csrf, 'Turn on two-step verification', codeField(input.error !== undefined))}
${form('/disable', csrf, 'Cancel', '', true)}`;
  }
  if (status.enabled) {
    const since =
      status.since === null ? '' : ` since ${escapeHtml(toIso(status.since).slice(0, 10))}`;
    return `<p id="two-factor-status">Two-step verification is <strong>on</strong>${since}. Signing in asks for a code from your authenticator app.</p>
<p id="recovery-codes-left">${status.recovery_codes_left} unused recovery code${status.recovery_codes_left === 1 ? '' : 's'} left.</p>
${
  input.stepUpUrl
    ? stepUpPrompt(input.stepUpUrl)
    : `${form('/recovery-codes', csrf, 'Make new recovery codes')}
${form('/disable', csrf, 'Turn off two-step verification', '', true)}`
}`;
  }
  const pending = status.pending
    ? '<p class="muted">A setup was started and not finished; starting again makes a new key.</p>\n'
    : '';
  return `<p id="two-factor-status">Two-step verification is <strong>off</strong>. Turn it on to be asked for a code from an authenticator app after your password.</p>
${pending}${input.stepUpUrl ? stepUpPrompt(input.stepUpUrl) : form('/totp', csrf, 'Set up an authenticator app')}`;
}

/** The hosted two-factor page of `/v1/account/two-factor`: works without JavaScript. */
export function twoFactorPage(input: TwoFactorPageInput): string {
  const alert = input.error
    ? `<div class="error" id="form-error" role="alert">${escapeHtml(input.error)}${
        input.signInAgainUrl
          ? ` <a href="${escapeHtml(input.signInAgainUrl)}">Sign in again</a>`
          : ''
      }</div>\n`
    : '';
  const notice = input.notice
    ? `<p class="notice" role="status">${escapeHtml(input.notice)}</p>\n`
    : '';
  return layout(
    'Two-step verification',
    `${signOutForm()}
<h1>Two-step verification</h1>
${alert}${notice}${body(input)}
<p class="note"><a href="/v1/account">Back to your account</a></p>`,
  );
}

/** For a browser without a valid session: sign in first, then come back here. */
export function signInFirstPage(signInUrl: string): string {
  return layout(
    'Sign in first',
    `<h1>Sign in first</h1>
<p>Sign in to manage two-step verification.</p>
<p><a href="${escapeHtml(signInUrl)}">Sign in</a></p>`,
  );
}
