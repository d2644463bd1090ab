import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { UpstreamProvider } from '../../domain/providers/upstream.js';
import { REGISTRATION_SCRIPTS } from '../assets.js';
import { providerButtons } from '../provider-pages/render.js';
import { escapeHtml, layout } from '../login-page/render.js';

export const REGISTRATION_PATH = '/v1/registration';
export const registrationSubmitPath = (id: string, way: 'password' | 'passkey') =>
  `${REGISTRATION_PATH}/${id}/${way}`;

/** A page's link to a fresh flow, carrying `return_to` on. */
function withReturnTo(path: string, returnTo: string | null): string {
  return returnTo ? `${path}?return_to=${encodeURIComponent(returnTo)}` : path;
}

/** The login page's link here (login-page/offers.ts), when sign-up is open. */
export function registrationLink(returnTo: string | null): string {
  return `No account yet? <a href="${escapeHtml(withReturnTo(REGISTRATION_PATH, returnTo))}">Create an account</a>`;
}

export interface RegistrationFormInput {
  flow: FlowRecord;
  /** Whether the address must be given (SERVICE_REGISTRATION_EMAIL is not `optional`). */
  emailRequired: boolean;
  /** A sentence for the user, shown above the form and announced by screen readers. */
  error?: string;
  /** What was typed, kept after a refusal (never the password). */
  values?: { username?: string; display_name?: string; email?: string };
  /** The upstream providers (SERVICE_PROVIDERS_FILE): a "Sign up with" button each. */
  providers?: readonly UpstreamProvider[];
}

const value = (text: string | undefined) => (text ? ` value="${escapeHtml(text)}"` : '');

/**
 * The hosted sign-up page: one form that signs up with a password, and (with JavaScript
 * and WebAuthn, registration-passkey.js) a button that signs up with a passkey instead,
 * from the same name and address fields. Without JavaScript the passkey part stays hidden.
 */
export function registrationPage({
  flow,
  emailRequired,
  error,
  values = {},
  providers = [],
}: RegistrationFormInput): string {
  const buttons = providerButtons(flow, providers, true);
  const invalid = error ? ' aria-invalid="true" aria-describedby="form-error"' : '';
  const alert = error
    ? `<div class="error" id="form-error" role="alert">${escapeHtml(error)}</div>\n`
    : '';
  const emailLabel = emailRequired ? 'Email address' : 'Email address (optional)';
  const destination = flow.return_to
    ? `<p class="note muted">After signing up you will continue to <strong>${escapeHtml(new URL(flow.return_to).host)}</strong>.</p>`
    : '';
  return layout(
    'Create an account',
    `<h1>Create an account</h1>
${alert}<form method="post" action="${escapeHtml(registrationSubmitPath(flow.id, 'password'))}" id="registration">
<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus${value(values.username)}${invalid}>
<label for="display_name">Display name (optional)</label>
<input id="display_name" name="display_name" type="text" autocomplete="name"${value(values.display_name)}>
<label for="email">${emailLabel}</label>
<input id="email" name="email" type="email" autocomplete="email"${emailRequired ? ' required' : ''}${value(values.email)}${invalid}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required${invalid}>
<button type="submit">Create account</button>
</form>
<div id="passkey-signup" data-flow="${escapeHtml(flow.id)}" data-csrf="${escapeHtml(flow.csrf_token)}" hidden>
<p class="or">or</p>
<button type="button" id="passkey-signup-button" class="secondary">Create account with a passkey</button>
<p class="note muted">No password: your device's screen lock signs you in.</p>
<p id="passkey-signup-status" class="note muted" role="status"></p>
</div>
${buttons ? `<p class="or">or</p>\n${buttons}\n` : ''}<p class="note">Already have an account? <a href="${escapeHtml(withReturnTo('/v1/login', flow.return_to))}">Sign in</a></p>
${destination}`,
    REGISTRATION_SCRIPTS,
  );
}

/** Where the dead-end pages send the user: a fresh sign-up form, keeping `return_to`. */
export function restartRegistrationUrl(flow: FlowRecord | undefined): string {
  return withReturnTo(REGISTRATION_PATH, flow?.return_to ?? null);
}
