import { GRANTS, type ServiceTokenView } from '../../domain/service-tokens/service-token.js';
import type { Identity } from '../../domain/identities/identity.js';
import { escapeHtml } from '../login-page/render.js';
import { ADMIN_PATHS, consolePage, csrfField, notices, when } from './render.js';

export const TOKEN_NOTICES = { revoked: 'The service token was revoked.' } as const;
export type TokenNotice = keyof typeof TOKEN_NOTICES;

export interface ServiceTokensPageInput {
  operator: Identity;
  tokens: ServiceTokenView[];
  csrfToken: string;
  /** A token just created: shown this once, never stored. */
  created?: { token: string; service: ServiceTokenView };
  notice?: string;
  error?: string;
  /** The create form as sent, kept after a refusal. */
  draft?: { name: string; grants: string[] };
}

function createdToken(created: NonNullable<ServiceTokensPageInput['created']>): string {
  return `<section aria-labelledby="created-heading" class="notice" role="status">
<h2 id="created-heading">Token for ${escapeHtml(created.service.name)}</h2>
<p>Copy it now: it is shown this once and never stored (only its hash is).</p>
<p><code class="key" id="created-token">${escapeHtml(created.token)}</code></p>
</section>`;
}

function createForm(input: ServiceTokensPageInput): string {
  const chosen = new Set(input.draft?.grants ?? []);
  const boxes = GRANTS.map(
    (grant) =>
      `<label class="check"><input type="checkbox" name="grants" value="${grant}"${chosen.has(grant) ? ' checked' : ''}> ${grant}</label>`,
  ).join('\n');
  return `<section aria-labelledby="create-heading">
<h2 id="create-heading">Create a service token</h2>
<form method="post" action="${ADMIN_PATHS.serviceTokens}">
${csrfField(input.csrfToken)}
<label for="name">Name</label>
<input id="name" name="name" type="text" required autocapitalize="none" spellcheck="false" value="${escapeHtml(input.draft?.name ?? '')}" aria-describedby="name-hint">
<span class="hint" id="name-hint">1-64 letters, digits, ".", "_", "-"; unique. Grants are fixed for the token's life.</span>
<fieldset><legend>Grants</legend>
${boxes}
</fieldset>
<button type="submit">Create token</button>
</form>
</section>`;
}

function tokenRow(token: ServiceTokenView, csrfToken: string): string {
  const revoke =
    token.revoked_at === null
      ? `<form class="inline" method="post" action="${escapeHtml(ADMIN_PATHS.revokeServiceToken(token.id))}">
${csrfField(csrfToken)}
<button type="submit" class="danger" aria-label="Revoke ${escapeHtml(token.name)}">Revoke</button>
</form>`
      : `revoked ${when(token.revoked_at)}`;
  const legacy = token.token_format === 'legacy' ? ' (pre-checksum: rotate)' : '';
  return `<tr>
<td>${escapeHtml(token.name)}${legacy}</td>
<td>${escapeHtml(token.grants.join(' '))}</td>
<td>${when(token.created_at)}</td>
<td><code>${escapeHtml(token.id)}</code></td>
<td>${revoke}</td>
</tr>`;
}

export function serviceTokensPage(input: ServiceTokensPageInput): string {
  const table = input.tokens.length
    ? `<table class="tokens">
<thead><tr><th scope="col">Name</th><th scope="col">Grants</th><th scope="col">Created</th><th scope="col">Id</th><th scope="col">State</th></tr></thead>
<tbody>
${input.tokens.map((token) => tokenRow(token, input.csrfToken)).join('\n')}
</tbody>
</table>`
    : '<p class="muted">No service tokens.</p>';
  return consolePage(
    input.operator,
    'tokens',
    'Service tokens',
    `${notices({ notice: input.notice, error: input.error })}${input.created ? createdToken(input.created) : ''}
${table}
${createForm(input)}`,
  );
}
