import type { MailCodeRecord } from '../../domain/mail-codes/mail-code.js';
import { escapeHtml, layout } from '../login-page/render.js';

export const VERIFICATION_PATH = '/v1/verification';
export const verificationSubmitPath = (id: string) => `/v1/verification/${id}`;
export const verificationResendPath = (id: string) => `/v1/verification/${id}/resend`;

export interface VerificationPageInput {
  record: MailCodeRecord;
  /** The link's token: the page then shows one button that posts it (a GET verifies nothing). */
  token?: string;
  returnTo: string | null;
  error?: string;
  notice?: string;
}

/**
 * The hosted verification page: the code form, or (opened from the mail's link) a single
 * confirm button. A mail scanner that fetches the link gets this page and changes nothing:
 * only the POST that the button sends uses the code.
 */
export function verificationPage({
  record,
  token,
  returnTo,
  error,
  notice,
}: VerificationPageInput): string {
  const hidden = [
    `<input type="hidden" name="csrf_token" value="${escapeHtml(record.csrf_token)}">`,
    ...(returnTo ? [`<input type="hidden" name="return_to" value="${escapeHtml(returnTo)}">`] : []),
  ].join('\n');
  const alert = error
    ? `<div class="error" id="form-error" role="alert">${escapeHtml(error)}</div>\n`
    : '';
  const info = notice ? `<p class="notice" role="status">${escapeHtml(notice)}</p>\n` : '';
  const address = `<p>Confirm <strong>${escapeHtml(record.address)}</strong> as your email address.</p>`;
  const action = escapeHtml(verificationSubmitPath(record.id));
  const form = token
    ? `<form method="post" action="${action}">
${hidden}
<input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">Confirm address</button>
</form>`
    : `<form method="post" action="${action}">
${hidden}
<label for="code">Code from the mail</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="16" required autofocus${error ? ' aria-invalid="true" aria-describedby="form-error"' : ''}>
<button type="submit">Confirm</button>
</form>`;
  const resend = `<form method="post" action="${escapeHtml(verificationResendPath(record.id))}">
${hidden}
<button type="submit" class="secondary">Send a new code</button>
</form>`;
  return layout(
    'Confirm your email address',
    `<h1>Confirm your email address</h1>\n${alert}${info}${address}\n${form}\n${resend}`,
  );
}

export function verifiedPage(address: string, returnTo: string | null): string {
  const next = returnTo
    ? `<p><a href="${escapeHtml(returnTo)}">Continue</a></p>`
    : '<p><a href="/v1/account">To your account</a></p>';
  return layout(
    'Email address confirmed',
    `<h1>Email address confirmed</h1>\n<p role="status"><strong>${escapeHtml(address)}</strong> is now your email address.</p>\n${next}`,
  );
}
