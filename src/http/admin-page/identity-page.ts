import type { AuditEntry } from '../../domain/audit/audit.js';
import type { Identity } from '../../domain/identities/identity.js';
import type { Link } from '../../domain/links/link.js';
import type { Passkey } from '../../domain/passkeys/passkey.js';
import type { SecondFactorStatus } from '../../domain/second-factor/enrolment.js';
import { toIso } from '../../lib/clock.js';
import { escapeHtml } from '../login-page/render.js';
import type { SessionListItem } from '../session-list.js';
import { auditTable } from './audit-table.js';
import { ADMIN_PATHS, consolePage, csrfField, notices, when } from './render.js';

/** The notices an action's 303 can ask the identity page to show (`?done=`): fixed sentences. */
export const IDENTITY_NOTICES = {
  disabled: 'The identity was disabled.',
  enabled: 'The identity was enabled.',
  'sessions-ended': 'Its sessions were ended.',
  'passkeys-reset': 'Its passkeys were removed.',
  'second-factor-reset': 'Its second factor was removed.',
  'email-verified': 'Its email address is now verified.',
  'recovery-sent': 'A recovery mail is on its way to its verified address.',
} as const;
export type IdentityNotice = keyof typeof IDENTITY_NOTICES;

export interface IdentityPageInput {
  operator: Identity;
  identity: Identity;
  isOperator: boolean;
  hasPassword: boolean;
  links: Link[];
  passkeys: Passkey[];
  secondFactor: SecondFactorStatus;
  sessions: SessionListItem[];
  events: AuditEntry[];
  csrfToken: string;
  notice?: string;
}

function section(id: string, title: string, body: string): string {
  return `<section aria-labelledby="${id}">
<h2 id="${id}">${title}</h2>
${body}
</section>`;
}

/** One action: a form posting to the identity's action path, with the CSRF token. */
function actionForm(
  input: IdentityPageInput,
  action: string,
  label: string,
  { danger = false, extra = '' } = {},
): string {
  return `<form method="post" action="${escapeHtml(ADMIN_PATHS.action(input.identity.id, action))}">
${csrfField(input.csrfToken)}${extra}
<button type="submit"${danger ? ' class="danger"' : ''}>${label}</button>
</form>`;
}

function profile(input: IdentityPageInput): string {
  const { identity } = input;
  const facts: [string, string][] = [
    ['Username', escapeHtml(identity.username)],
    ['Display name', escapeHtml(identity.display_name)],
    ['Id', `<code>${escapeHtml(identity.id)}</code>`],
    [
      'Email',
      identity.email === null
        ? 'none'
        : `${escapeHtml(identity.email)} (${identity.email_verified ? 'verified' : 'not verified'})`,
    ],
    ['State', escapeHtml(identity.state)],
    ['Avatar URL', identity.avatar_url ? escapeHtml(identity.avatar_url) : 'none'],
    ['Password', input.hasPassword ? 'set' : 'none'],
    ['Operator', input.isOperator ? 'yes' : 'no'],
    ['Created', when(identity.created_at)],
    ['Updated', when(identity.updated_at)],
  ];
  const list = facts.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('\n');
  return section('profile-heading', 'Profile', `<dl class="facts" id="profile">\n${list}\n</dl>`);
}

function actions(input: IdentityPageInput): string {
  const forms: string[] = [];
  if (input.identity.state === 'active') {
    forms.push(
      actionForm(input, 'disable', 'Disable', {
        danger: true,
        extra: `\n<label class="check"><input type="checkbox" name="end_sessions" value="true" checked> Also end its sessions</label>`,
      }),
    );
  } else {
    forms.push(actionForm(input, 'enable', 'Enable'));
  }
  const { email, email_verified: verified } = input.identity;
  if (email !== null && !verified) {
    // The address goes with the form: what is marked verified is the one the operator saw.
    forms.push(
      actionForm(input, 'verify-email', 'Mark the email address verified', {
        extra: `\n<input type="hidden" name="email" value="${escapeHtml(email)}">`,
      }),
    );
  }
  forms.push(
    actionForm(input, 'end-sessions', `End all sessions (${input.sessions.length})`, {
      danger: true,
    }),
    actionForm(input, 'reset-passkeys', `Remove all passkeys (${input.passkeys.length})`, {
      danger: true,
    }),
    actionForm(input, 'reset-second-factor', 'Remove the second factor', { danger: true }),
    actionForm(input, 'send-recovery', 'Send a recovery mail'),
  );
  return section(
    'actions-heading',
    'Actions',
    `<p class="muted">Each is audited with you as the actor. All but Enable need a sign-in within the last few minutes.</p>
<div class="actions">
${forms.join('\n')}
</div>`,
  );
}

function credentials(input: IdentityPageInput): string {
  const factor = input.secondFactor;
  const totp = factor.enabled
    ? `Authenticator app (TOTP) since ${when(toIso(factor.since!))}; ${factor.recovery_codes_left} recovery code(s) left.`
    : `No authenticator app${factor.pending ? ' (an enrolment is pending)' : ''}.`;
  const passkeys = input.passkeys.length
    ? `<ul>\n${input.passkeys
        .map(
          (passkey) =>
            `<li>${escapeHtml(passkey.name)} · added ${when(passkey.created_at)} · last used ${when(passkey.last_used_at)}</li>`,
        )
        .join('\n')}\n</ul>`
    : '<p class="muted">No passkeys.</p>';
  return section(
    'credentials-heading',
    'Second factor and passkeys',
    `<p id="second-factor">${totp}</p>\n${passkeys}`,
  );
}

function links(input: IdentityPageInput): string {
  const body = input.links.length
    ? `<ul>\n${input.links
        .map(
          (link) =>
            `<li>${escapeHtml(link.provider)}: <code>${escapeHtml(link.subject)}</code> · linked ${when(link.linked_at)}${link.verified_at ? ` · verified ${when(link.verified_at)}` : ''}</li>`,
        )
        .join('\n')}\n</ul>`
    : '<p class="muted">No links.</p>';
  return section('links-heading', 'Links', body);
}

function sessions(input: IdentityPageInput): string {
  const body = input.sessions.length
    ? `<table>
<thead><tr><th scope="col">Device</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last used</th><th scope="col">Method</th></tr></thead>
<tbody>
${input.sessions
  .map((session) => {
    const device =
      session.browser && session.os
        ? `${session.browser} on ${session.os}`
        : (session.browser ?? session.os ?? 'Unknown device');
    return `<tr><td>${escapeHtml(device)}</td><td>${escapeHtml(session.client_address ?? 'unknown')}</td><td>${when(session.issued_at)}</td><td>${when(session.last_used_at)}</td><td>${escapeHtml(session.authenticated_via)} (${escapeHtml(session.aal)})</td></tr>`;
  })
  .join('\n')}
</tbody>
</table>`
    : '<p class="muted" id="no-sessions">No live sessions.</p>';
  return section('sessions-heading', 'Sessions', body);
}

export function identityPage(input: IdentityPageInput): string {
  const more = `<p><a href="${escapeHtml(`${ADMIN_PATHS.audit}?identity=${encodeURIComponent(input.identity.id)}`)}">All its audit events</a></p>`;
  return consolePage(
    input.operator,
    'identities',
    input.identity.display_name,
    `${notices({ notice: input.notice })}${profile(input)}
${actions(input)}
${credentials(input)}
${links(input)}
${sessions(input)}
${section('events-heading', 'Recent audit events', `${auditTable(input.events, 'The newest events about this identity')}\n${more}`)}`,
  );
}
