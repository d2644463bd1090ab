import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { UpstreamProvider } from '../../domain/providers/upstream.js';
import { escapeHtml, layout } from '../login-page/render.js';

/**
 * One form per provider, posting to `POST /v1/flows/{id}/provider` (the login page) or
 * `POST /v1/registration/{id}/provider` (the sign-up page, `signUp`).
 */
export function providerButtons(
  flow: FlowRecord,
  providers: Iterable<UpstreamProvider>,
  signUp = false,
): string {
  const action = signUp ? `/v1/registration/${flow.id}/provider` : `/v1/flows/${flow.id}/provider`;
  const verb = signUp ? 'Sign up' : 'Sign in';
  const forms = [...providers].map(
    (provider) => `<form method="post" action="${escapeHtml(action)}" class="provider">
<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">
<input type="hidden" name="provider" value="${escapeHtml(provider.id)}">
<button type="submit" class="secondary">${verb} with ${escapeHtml(provider.label)}</button>
</form>`,
  );
  return forms.length ? `<div id="providers">\n${forms.join('\n')}\n</div>` : '';
}

/**
 * The answer to a provider button: on to the provider. A page that navigates by itself
 * (meta refresh, no script), not a 303: the login page's `form-action` lets its forms reach
 * Tessera only, and browsers apply it to a form post's redirect too.
 */
export function continuePage(provider: UpstreamProvider, url: string): string {
  return layout(
    `Continue to ${provider.label}`,
    `<meta http-equiv="refresh" content="0;url=${escapeHtml(url)}">
<h1>Continue to ${escapeHtml(provider.label)}</h1>
<p>Taking you to ${escapeHtml(provider.label)} to sign in.</p>
<p><a id="continue" href="${escapeHtml(url)}">Continue to ${escapeHtml(provider.label)}</a></p>`,
  );
}
