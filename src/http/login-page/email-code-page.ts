import type { DomainError } from '../../domain/errors.js';
import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { FormPageInput } from '../flow-methods.js';
import { destination, escapeHtml, layout } from './render.js';
import { restartUrl } from './respond.js';

/**
 * The hosted page's email code sign-in (docs/email-code.md), without script: the login
 * page's block asks for the address and posts it to the challenge, whose answer is the page
 * asking for the code; the code posts to the flow like the password form.
 */

const challengeAction = (flow: FlowRecord) => `/v1/flows/${escapeHtml(flow.id)}/email_code/options`;
const submitAction = (flow: FlowRecord) => `/v1/flows/${escapeHtml(flow.id)}/email_code`;
const csrfField = (flow: FlowRecord) =>
  `<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">`;
const INVALID = ' aria-invalid="true" aria-describedby="form-error"';

function alert(message: string | undefined): string {
  return message
    ? `<div class="error" id="form-error" role="alert">${escapeHtml(message)}</div>\n`
    : '';
}

/** The form that asks for the address; `invalid` marks it as the one the error is about. */
function addressForm(flow: FlowRecord, address: string, invalid: boolean): string {
  const value = address ? ` value="${escapeHtml(address)}"` : '';
  return `<form method="post" action="${challengeAction(flow)}">
${csrfField(flow)}
<label for="email-code-address">Email address</label>
<input id="email-code-address" name="address" type="email" autocomplete="email" autocapitalize="none" spellcheck="false" required${value}${invalid ? `${INVALID} autofocus` : ''}>
<button type="submit" class="secondary">Email me a sign-in code</button>
</form>`;
}

/** The login page's block (offers.ts): the address form. */
export function emailCodeOffer(flow: FlowRecord): string {
  return addressForm(flow, '', false);
}

function anotherWay(flow: FlowRecord): string {
  return `<p class="note"><a href="${escapeHtml(restartUrl(flow))}">Sign in another way</a></p>\n`;
}

/** A sentence for a failed step; the page stays usable (dead ends are the login page's). */
function sentence(error: DomainError, step: FormPageInput['step']): string {
  switch (error.code) {
    case 'invalid_credentials':
      return 'That code is not right, or it has expired. Check the newest mail, or send a new code.';
    case 'identity_disabled':
      return 'This account is disabled. Contact your administrator.';
    case 'rate_limited':
      return `Too many attempts. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
    case 'validation_error':
      if (step === 'submit') return 'Enter the code from the mail.';
      return error.reason === 'missing_address'
        ? 'Enter your email address.'
        : 'That is not an email address. Check it and try again.';
    case 'unavailable':
    case 'timeout':
      return 'Sign-in is temporarily unavailable. Try again in a moment.';
    default:
      return 'Sign-in did not work. Try again.';
  }
}

function addressPage(flow: FlowRecord, address: string, error: string | undefined): string {
  return layout(
    'Sign in with an email code',
    `<h1>Sign in with an email code</h1>
${alert(error)}${addressForm(flow, address, error !== undefined)}
${anotherWay(flow)}${destination(flow)}`,
  );
}

function codePage(flow: FlowRecord, address: string, error: string | undefined): string {
  const hidden = `${csrfField(flow)}\n<input type="hidden" name="address" value="${escapeHtml(address)}">`;
  return layout(
    'Enter the code from the mail',
    `<h1>Enter the code from the mail</h1>
<p>If <strong>${escapeHtml(address)}</strong> is the confirmed address of an account, a sign-in code is on its way there.</p>
${alert(error)}<form method="post" action="${submitAction(flow)}">
${hidden}
<label for="code">Code from the mail</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="16" required autofocus${error ? INVALID : ''}>
<button type="submit">Sign in</button>
</form>
<form method="post" action="${challengeAction(flow)}">
${hidden}
<button type="submit" class="secondary">Send a new code</button>
</form>
${anotherWay(flow)}${destination(flow)}`,
  );
}

/**
 * The method's page (FlowMethodSurface.formPage): after the challenge, the code form; a
 * failed challenge, the address form again; a failed code, the code form again. A post
 * without an address (not from these forms) gets the address form.
 */
export function emailCodePage({ flow, step, fields, error }: FormPageInput): string {
  const address = typeof fields.address === 'string' ? fields.address : '';
  const message = error ? sentence(error, step) : undefined;
  if (address === '' || (step === 'challenge' && error)) {
    return addressPage(flow, address, message);
  }
  return codePage(flow, address, message);
}
