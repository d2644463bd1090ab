import type { RecoveryFlowRecord } from '../../domain/recovery/recovery-flow.js';
import type { SecondFactorMethodId } from '../../domain/sign-in/second-factors.js';
import { escapeHtml, layout } from '../login-page/render.js';

export const RECOVERY_PATH = '/v1/recovery';
export const recoveryPaths = (id: string) => ({
  email: `/v1/recovery/${id}/email`,
  resend: `/v1/recovery/${id}/resend`,
  code: `/v1/recovery/${id}/code`,
  complete: `/v1/recovery/${id}`,
});

const TITLE = 'Recover your account';

interface Common {
  flow: RecoveryFlowRecord;
  error?: string;
  notice?: string;
}

function hidden(flow: RecoveryFlowRecord, extra: Record<string, string> = {}): string {
  return Object.entries({ csrf_token: flow.csrf_token, ...extra })
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('\n');
}

function messages({ error, notice }: Common): string {
  return (
    (error ? `<div class="error" id="form-error" role="alert">${escapeHtml(error)}</div>\n` : '') +
    (notice ? `<p class="notice" role="status">${escapeHtml(notice)}</p>\n` : '')
  );
}

const invalid = (error: string | undefined) =>
  error ? ' aria-invalid="true" aria-describedby="form-error"' : '';

/** Step 1: the address. */
export function addressPage(input: Common): string {
  const { flow, error } = input;
  return layout(
    TITLE,
    `<h1>${TITLE}</h1>
${messages(input)}<p>Enter the email address of your account. If it is the account’s confirmed address, we mail it a code to set a new password.</p>
<form method="post" action="${escapeHtml(recoveryPaths(flow.id).email)}">
${hidden(flow)}
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" maxlength="320" required autofocus${invalid(error)}>
<button type="submit">Send a code</button>
</form>
<p><a href="/v1/login${flow.return_to ? `?return_to=${escapeHtml(encodeURIComponent(flow.return_to))}` : ''}">Back to sign-in</a></p>`,
  );
}

/**
 * Step 2: the code. The same page whether or not the address belongs to an account: it
 * says what happens if it does, never whether it did.
 */
export function codePage(input: Common): string {
  const { flow, error } = input;
  const paths = recoveryPaths(flow.id);
  return layout(
    'Check your mail',
    `<h1>Check your mail</h1>
${messages(input)}<p>If <strong>${escapeHtml(flow.address ?? '')}</strong> is the confirmed address of an account, a code is on its way there. Enter it here, or open the link in the mail.</p>
<form method="post" action="${escapeHtml(paths.code)}">
${hidden(flow)}
<label for="code">Code from the mail</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="16" required autofocus${invalid(error)}>
<button type="submit">Continue</button>
</form>
<form method="post" action="${escapeHtml(paths.resend)}">
${hidden(flow)}
<button type="submit" class="secondary">Send a new code</button>
</form>`,
  );
}

export interface PasswordPageInput extends Common {
  /** The proof already accepted, posted again with the new password (it is spent then). */
  proof: { code: string } | { token: string };
  secondFactors: readonly SecondFactorMethodId[];
}

/** Step 3: the new password, and the second factor when the account has one. */
export function passwordPage(input: PasswordPageInput): string {
  const { flow, error, proof, secondFactors } = input;
  const factor = secondFactors.includes('totp')
    ? `<p>Your account has two-step sign-in: a mailed code alone cannot change its password.</p>
<label for="totp_code">Code from your authenticator app</label>
<input id="totp_code" name="totp_code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="16">
<label for="recovery_code">Or one of your recovery codes</label>
<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" maxlength="64">
`
    : '';
  return layout(
    'Choose a new password',
    `<h1>Choose a new password</h1>
${messages(input)}<form method="post" action="${escapeHtml(recoveryPaths(flow.id).complete)}">
${hidden(flow, 'token' in proof ? { token: proof.token } : { code: proof.code })}
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="256" required autofocus${invalid(error)}>
${factor}<button type="submit">Set the password and sign in</button>
</form>`,
  );
}

/** Done: signed in with the new password's session. */
export function recoveredPage(returnTo: string | null): string {
  const next = returnTo
    ? `<p><a href="${escapeHtml(returnTo)}">Continue</a></p>`
    : '<p><a href="/v1/account">To your account</a></p>';
  return layout(
    'Password changed',
    `<h1>Password changed</h1>\n<p role="status">Your new password is set and you are signed in. Every other session of your account was ended.</p>\n${next}`,
  );
}
