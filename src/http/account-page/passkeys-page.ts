import type { Passkey } from '../../domain/passkeys/passkey.js';
import { PASSKEY_NAME_MAX } from '../../domain/passkeys/passkey.js';
import type { Session } from '../../domain/sessions/session.js';
import { ACCOUNT_SCRIPTS } from '../assets.js';
import { escapeHtml, layout } from '../login-page/render.js';
import { signOutForm } from '../login-page/sign-out.js';

export interface PasskeysPageInput {
  session: Session;
  passkeys: Passkey[];
  csrfToken: string;
  /** Adding and removing need a sign-in this recent; false: the page offers a fresh one. */
  recent: boolean;
  /** The session is aal1 beside a second factor or passkey: it must sign in with that first. */
  stepUp: boolean;
  /** The hosted login, returning here. */
  reauthUrl: string;
}

function when(iso: string | null): string {
  if (iso === null) return 'never';
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.slice(0, 16).replace('T', ' '))} UTC</time>`;
}

function item(passkey: Passkey): string {
  const id = escapeHtml(passkey.id);
  const synced = passkey.backed_up ? ' · synced' : '';
  return `<li>
<strong class="passkey-name">${escapeHtml(passkey.name)}</strong>
<div class="muted">Added ${when(passkey.created_at)} · last used ${when(passkey.last_used_at)}${synced}</div>
<div data-needs-js hidden>
<label for="name-${id}" class="muted">Name</label>
<input id="name-${id}" value="${escapeHtml(passkey.name)}" maxlength="${PASSKEY_NAME_MAX}">
<div class="row">
<button type="button" class="secondary" data-action="rename" data-id="${id}">Rename</button>
<button type="button" class="secondary" data-action="delete" data-id="${id}">Delete</button>
</div>
</div>
</li>`;
}

/**
 * `GET /v1/account/passkeys`: the list works without JavaScript; adding, renaming and
 * removing need it (the browser's WebAuthn API is a script API), and the page says so.
 */
export function passkeysPage(input: PasskeysPageInput): string {
  const { identity } = input.session;
  const list =
    input.passkeys.length === 0
      ? '<p class="muted" id="no-passkeys">You have no passkeys yet.</p>'
      : `<ul class="passkeys">\n${input.passkeys.map(item).join('\n')}\n</ul>`;
  const add = input.stepUp
    ? `<p class="muted" id="step-up">Adding or removing a passkey needs a sign-in with your second factor.</p>
<p><a href="${escapeHtml(input.reauthUrl)}" id="reauth">Sign in again with a passkey or your authenticator app</a></p>`
    : input.recent
      ? `<form id="add-passkey" hidden>
<label for="passkey-name">Name of the new passkey (optional)</label>
<input id="passkey-name" name="name" maxlength="${PASSKEY_NAME_MAX}" placeholder="e.g. Work laptop">
<button type="submit">Add a passkey</button>
</form>`
      : `<p class="muted">Adding or removing a passkey needs a recent sign-in.</p>
<p><a href="${escapeHtml(input.reauthUrl)}" id="reauth">Sign in again to add or remove passkeys</a></p>`;
  return layout(
    'Passkeys',
    `${signOutForm()}
<h1>Passkeys</h1>
<p class="muted">Signed in as <strong>${escapeHtml(identity.display_name)}</strong> (${escapeHtml(identity.username)}). A passkey signs you in without a password, unlocked by this device's screen lock.</p>
<div id="passkeys" data-csrf="${escapeHtml(input.csrfToken)}" data-reauth="${escapeHtml(input.reauthUrl)}">
${list}
<p id="needs-js" class="muted">Adding, renaming and removing passkeys needs JavaScript.</p>
${add}
<p id="passkeys-status" class="muted" role="status"></p>
</div>
<p class="note"><a href="/v1/account">Back to your account</a></p>`,
    ACCOUNT_SCRIPTS,
  );
}
