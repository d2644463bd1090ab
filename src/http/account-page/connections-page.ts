import type { Connection } from '../../domain/providers/connections.js';
import type { Session } from '../../domain/sessions/session.js';
import { escapeHtml, layout } from '../login-page/render.js';
import { signOutForm } from '../login-page/sign-out.js';

export const CONNECTIONS_PATH = '/v1/account/connections';

export interface ConnectionsPageInput {
  session: Session;
  connections: Connection[];
  csrfToken: string;
  notice?: string;
  error?: string;
}

function csrf(token: string): string {
  return `<input type="hidden" name="csrf_token" value="${escapeHtml(token)}">`;
}

function row(connection: Connection, token: string): string {
  const provider = escapeHtml(connection.provider);
  const label = escapeHtml(connection.label);
  const accounts = connection.accounts
    .map(
      (
        account,
      ) => `<li>Connected since <time datetime="${escapeHtml(account.linked_at)}">${escapeHtml(account.linked_at.slice(0, 10))}</time>
<form class="inline" method="post" action="${CONNECTIONS_PATH}/${provider}/disconnect">
${csrf(token)}
<input type="hidden" name="subject" value="${escapeHtml(account.subject)}">
<button type="submit" class="secondary">Disconnect ${label}</button>
</form></li>`,
    )
    .join('\n');
  const connect = `<form method="post" action="${CONNECTIONS_PATH}/${provider}/connect">
${csrf(token)}
<button type="submit" class="secondary">Connect ${label}</button>
</form>`;
  return `<li><h3>${label}</h3>
${accounts ? `<ul>\n${accounts}\n</ul>` : '<p class="muted">Not connected.</p>'}
${connection.accounts.length ? '' : connect}</li>`;
}

/** "Connected accounts": the configured providers, connect and disconnect (docs/providers.md). */
export function connectionsPage(input: ConnectionsPageInput): string {
  const notice = input.notice
    ? `<div class="notice" role="status">${escapeHtml(input.notice)}</div>\n`
    : '';
  const error = input.error
    ? `<div class="error" role="alert">${escapeHtml(input.error)}</div>\n`
    : '';
  const list = input.connections.length
    ? `<ul class="connections">\n${input.connections.map((c) => row(c, input.csrfToken)).join('\n')}\n</ul>`
    : '<p class="muted">No sign-in providers are configured.</p>';
  return layout(
    'Connected accounts',
    `${signOutForm()}
<h1>Connected accounts</h1>
${notice}${error}<p>Accounts at other providers you can sign in with.</p>
${list}
<p><a href="/v1/account">Back to your account</a></p>`,
  );
}
