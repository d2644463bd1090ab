import type { OidcClientView } from '../../domain/oidc/client.js';
import type { KeyView } from '../../domain/oidc/signing-keys.js';
import type { Identity } from '../../domain/identities/identity.js';
import { escapeHtml } from '../login-page/render.js';
import { ADMIN_PATHS, consolePage, csrfField, notices, when } from './render.js';

export const OIDC_NOTICES = {
  revoked: 'The client was revoked; every token it held was deleted.',
  rotated: 'A new signing key was added: published now, signing once it activates.',
} as const;
export type OidcNotice = keyof typeof OIDC_NOTICES;

export interface OidcClientDraft {
  name: string;
  redirect_uris: string;
  post_logout_redirect_uris: string;
  public: boolean;
  first_party: boolean;
}

export interface OidcPageInput {
  operator: Identity;
  /** False while SERVICE_OIDC_ISSUER is unset: clients and keys wait for it. */
  providerOn: boolean;
  clients: OidcClientView[];
  keys: KeyView[];
  csrfToken: string;
  /** A client just created, with its secret (confidential clients): shown this once. */
  created?: { client: OidcClientView; client_secret: string | null };
  notice?: string;
  error?: string;
  draft?: OidcClientDraft;
}

function created(input: NonNullable<OidcPageInput['created']>): string {
  const secret =
    input.client_secret === null
      ? '<p>A public client: no secret (it must use PKCE).</p>'
      : `<p>Client secret (copy it now: it is shown this once and only its hash is stored):</p>
<p><code class="key" id="created-secret">${escapeHtml(input.client_secret)}</code></p>`;
  return `<section aria-labelledby="created-heading" class="notice" role="status">
<h2 id="created-heading">Client ${escapeHtml(input.client.name)}</h2>
<p>client_id: <code id="created-client-id">${escapeHtml(input.client.client_id)}</code></p>
${secret}
</section>`;
}

function clientRow(client: OidcClientView, csrfToken: string): string {
  const state =
    client.revoked_at === null
      ? `<form class="inline" method="post" action="${escapeHtml(ADMIN_PATHS.revokeOidcClient(client.client_id))}">
${csrfField(csrfToken)}
<button type="submit" class="danger" aria-label="Revoke ${escapeHtml(client.name)}">Revoke</button>
</form>`
      : `revoked ${when(client.revoked_at)}`;
  return `<tr>
<td>${escapeHtml(client.name)}</td>
<td><code>${escapeHtml(client.client_id)}</code></td>
<td>${client.type}, ${client.first_party ? 'first-party' : 'third-party'}</td>
<td>${client.redirect_uris.map((uri) => escapeHtml(uri)).join('<br>')}</td>
<td>${when(client.created_at)}</td>
<td>${state}</td>
</tr>`;
}

function createForm(input: OidcPageInput): string {
  const draft = input.draft;
  const check = (name: 'public' | 'first_party', label: string) =>
    `<label class="check"><input type="checkbox" name="${name}" value="true"${draft?.[name] ? ' checked' : ''}> ${label}</label>`;
  return `<section aria-labelledby="create-heading">
<h2 id="create-heading">Register a client</h2>
<form method="post" action="${ADMIN_PATHS.oidcClients}">
${csrfField(input.csrfToken)}
<label for="client-name">Name</label>
<input id="client-name" name="name" type="text" required value="${escapeHtml(draft?.name ?? '')}" aria-describedby="client-name-hint">
<span class="hint" id="client-name-hint">Shown to users on the consent page.</span>
<label for="redirect_uris">Redirect URIs</label>
<textarea id="redirect_uris" name="redirect_uris" rows="3" required aria-describedby="redirect-hint">${escapeHtml(draft?.redirect_uris ?? '')}</textarea>
<span class="hint" id="redirect-hint">One exact URI a line.</span>
<label for="post_logout_redirect_uris">Post-logout redirect URIs</label>
<textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2" aria-describedby="logout-hint">${escapeHtml(draft?.post_logout_redirect_uris ?? '')}</textarea>
<span class="hint" id="logout-hint">Optional; one a line.</span>
${check('public', 'Public client (a browser or native app): no secret, PKCE required')}
${check('first_party', 'First-party (your own application): no consent page')}
<button type="submit">Register client</button>
</form>
</section>`;
}

function keysSection(input: OidcPageInput): string {
  const rows = input.keys
    .map(
      (key) =>
        `<tr><td><code>${escapeHtml(key.kid)}</code></td><td>${escapeHtml(key.alg)}</td><td>${escapeHtml(key.state)}</td><td>${when(key.activates_at)}</td></tr>`,
    )
    .join('\n');
  const table = input.keys.length
    ? `<table id="signing-keys">
<thead><tr><th scope="col">Key id</th><th scope="col">Algorithm</th><th scope="col">State</th><th scope="col">Signs from</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`
    : '<p class="muted">No signing keys yet (the provider creates one when it first starts).</p>';
  return `<section aria-labelledby="keys-heading">
<h2 id="keys-heading">Signing keys</h2>
${table}
<form method="post" action="${ADMIN_PATHS.rotateOidcKey}">
${csrfField(input.csrfToken)}
<button type="submit" class="secondary">Rotate signing key</button>
</form>
</section>`;
}

export function oidcPage(input: OidcPageInput): string {
  const off = input.providerOn
    ? ''
    : '<p class="notice" id="provider-off">The OpenID Connect provider is off (SERVICE_OIDC_ISSUER is unset): clients and keys registered here take effect once it is on.</p>\n';
  const clients = input.clients.length
    ? `<table id="oidc-clients">
<thead><tr><th scope="col">Name</th><th scope="col">client_id</th><th scope="col">Type</th><th scope="col">Redirect URIs</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
<tbody>
${input.clients.map((client) => clientRow(client, input.csrfToken)).join('\n')}
</tbody>
</table>`
    : '<p class="muted">No clients.</p>';
  return consolePage(
    input.operator,
    'oidc',
    'OpenID Connect clients',
    `${off}${notices({ notice: input.notice, error: input.error })}${input.created ? created(input.created) : ''}
${clients}
${createForm(input)}
${keysSection(input)}`,
  );
}
