import type { FlowRecord } from '../../domain/login-flows/flow.js';
import { destination, escapeHtml, layout } from './render.js';

export interface SecondFactorPageInput {
  /** A flow in state `second_factor_required`. */
  flow: FlowRecord;
  /** The second factors that can complete it (`totp`, `recovery_code`). */
  methods: readonly string[];
  error?: string;
  /** Which form the error belongs to: the recovery code's opens its section. */
  failedMethod?: string;
}

/**
 * The hosted page's second step: the code of the authenticator app, or, behind a
 * "use a recovery code" disclosure (`<details>`, no script needed), a recovery code. Both
 * forms post to the flow with its CSRF token, as the password form does.
 */
export function secondFactorPage({
  flow,
  methods,
  error,
  failedMethod,
}: SecondFactorPageInput): string {
  const id = escapeHtml(flow.id);
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">`;
  const alert = error
    ? `<div class="error" id="form-error" role="alert">${escapeHtml(error)}</div>\n`
    : '';
  const recoveryFailed = failedMethod === 'recovery_code';
  const invalid = (mine: boolean) =>
    error && mine ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const totp = methods.includes('totp')
    ? `<form method="post" action="/v1/flows/${id}/totp">
${csrf}
<label for="code">Code from your authenticator app</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="16" required${invalid(!recoveryFailed)}${recoveryFailed ? '' : ' autofocus'}>
<button type="submit">Verify</button>
</form>
`
    : '';
  const recovery = methods.includes('recovery_code')
    ? `<details${recoveryFailed ? ' open' : ''}>
<summary>Use a recovery code</summary>
<form method="post" action="/v1/flows/${id}/recovery_code">
${csrf}
<label for="recovery_code">Recovery code</label>
<input id="recovery_code" name="recovery_code" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" required${invalid(recoveryFailed)}${recoveryFailed ? ' autofocus' : ''}>
<button type="submit">Use recovery code</button>
</form>
</details>
`
    : '';
  return layout(
    'Two-step verification',
    `<h1>Two-step verification</h1>
<p>Your first step was right. Enter the code your authenticator app shows for this account.</p>
${alert}${totp}${recovery}${destination(flow)}`,
  );
}
