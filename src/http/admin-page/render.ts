import type { Identity } from '../../domain/identities/identity.js';
import { escapeHtml } from '../login-page/render.js';
import { signOutForm } from '../login-page/sign-out.js';
import { ADMIN_STYLES } from './styles.js';

/** The console's pages and the forms' targets (docs/admin.md). */
export const ADMIN_PATHS = {
  home: '/v1/admin',
  identities: '/v1/admin/identities',
  identity: (id: string) => `/v1/admin/identities/${encodeURIComponent(id)}`,
  action: (id: string, action: string) =>
    `/v1/admin/identities/${encodeURIComponent(id)}/${action}`,
  audit: '/v1/admin/audit',
  auditCsv: '/v1/admin/audit.csv',
  serviceTokens: '/v1/admin/service-tokens',
  revokeServiceToken: (id: string) => `/v1/admin/service-tokens/${encodeURIComponent(id)}/revoke`,
  oidc: '/v1/admin/oidc',
  oidcClients: '/v1/admin/oidc/clients',
  revokeOidcClient: (id: string) => `/v1/admin/oidc/clients/${encodeURIComponent(id)}/revoke`,
  rotateOidcKey: '/v1/admin/oidc/keys/rotate',
  webhooks: '/v1/admin/webhooks',
  deleteWebhook: (id: string) => `/v1/admin/webhooks/${encodeURIComponent(id)}/delete`,
  resendDelivery: (id: string) => `/v1/admin/webhooks/deliveries/${encodeURIComponent(id)}/resend`,
} as const;

export type Section = 'home' | 'identities' | 'audit' | 'tokens' | 'oidc' | 'webhooks';

const SECTIONS: [Section, string, string][] = [
  ['home', ADMIN_PATHS.home, 'Overview'],
  ['identities', ADMIN_PATHS.identities, 'Identities'],
  ['audit', ADMIN_PATHS.audit, 'Audit log'],
  ['tokens', ADMIN_PATHS.serviceTokens, 'Service tokens'],
  ['oidc', ADMIN_PATHS.oidc, 'OIDC clients'],
  ['webhooks', ADMIN_PATHS.webhooks, 'Webhooks'],
];

/** `2026-11-23 14:05 UTC`, with the exact instant in `datetime`. */
export function when(iso: string | null): string {
  if (iso === null) return 'never';
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.slice(0, 10))} ${escapeHtml(iso.slice(11, 16))} UTC</time>`;
}

export function csrfField(token: string): string {
  return `<input type="hidden" name="csrf_token" value="${escapeHtml(token)}">`;
}

/** A fixed sentence after a form post (role=status), or a refusal (role=alert). */
export function notices({ notice, error }: { notice?: string; error?: string }): string {
  return (
    (notice ? `<div class="notice" role="status">${escapeHtml(notice)}</div>\n` : '') +
    (error ? `<div class="error" role="alert" id="form-error">${escapeHtml(error)}</div>\n` : '')
  );
}

function page(title: string, main: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Tessera admin</title>
<style>${ADMIN_STYLES}</style>
</head>
<body>
<main class="console">
${signOutForm()}
${main}
</main>
</body>
</html>
`;
}

/** A console page: the operator's name, the sections, then `body`. */
export function consolePage(
  operator: Identity,
  section: Section,
  title: string,
  body: string,
): string {
  const links = SECTIONS.map(
    ([name, href, label]) =>
      `<li><a href="${href}"${name === section ? ' aria-current="page"' : ''}>${label}</a></li>`,
  ).join('');
  return page(
    title,
    `<p class="muted">Tessera admin · signed in as <strong>${escapeHtml(operator.display_name)}</strong> (${escapeHtml(operator.username)})</p>
<nav class="console" aria-label="Console sections"><ul>${links}</ul></nav>
<h1>${escapeHtml(title)}</h1>
${body}`,
  );
}

export interface RefusalPageInput {
  title: string;
  message: string;
  /** A link that helps: sign in again, enrol a factor, go back. */
  links?: { href: string; label: string; id?: string }[];
}

/** Why the console refused: not an operator, a second factor or a fresh sign-in needed, a bad form. */
export function refusalPage({ title, message, links = [] }: RefusalPageInput): string {
  const items = links
    .map(
      (link) =>
        `<li><a href="${escapeHtml(link.href)}"${link.id ? ` id="${escapeHtml(link.id)}"` : ''}>${escapeHtml(link.label)}</a></li>`,
    )
    .join('\n');
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<div class="error" role="alert">${escapeHtml(message)}</div>
${items ? `<ul>\n${items}\n</ul>` : ''}`,
  );
}
