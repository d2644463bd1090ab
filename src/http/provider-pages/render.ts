import type { FlowRecord } from '../../domain/login-flows/flow.js';
import type { UpstreamProvider } from '../../domain/providers/upstream.js';
import { escapeHtml, layout } from '../login-page/render.js';

/** The login page's buttons, one form per provider, posting to `POST /v1/flows/{id}/provider`. */
export function providerButtons(flow: FlowRecord, providers: Iterable<UpstreamProvider>): string {
  const forms = [...providers].map(
    (
      provider,
    ) => `<form method="post" action="/v1/flows/${escapeHtml(flow.id)}/provider" class="provider">
<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">
<input type="hidden" name="provider" value="${escapeHtml(provider.id)}">
<button type="submit" class="secondary">Sign in with ${escapeHtml(provider.label)}</button>
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
