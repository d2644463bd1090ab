import type { AuditRecord } from '../audit/audit.js';
import type { WebhookEventType } from './webhook.js';

/** One event a change emits, before it is addressed to the webhooks subscribed to it. */
export interface WebhookEvent {
  type: WebhookEventType;
  data: Record<string, unknown>;
}

type Details = Record<string, unknown>;

/** Outcomes of a sign-in row that are neither a success nor a failure of the credentials. */
const NOT_A_SIGN_IN = new Set(['second_factor_required']);

/** The keys of `details` that are present, copied: every value here is named, never a secret. */
function pick(details: Details, keys: readonly string[]): Details {
  const picked: Details = {};
  for (const key of keys) if (details[key] !== undefined) picked[key] = details[key];
  return picked;
}

function signIn(record: AuditRecord, details: Details): WebhookEvent[] {
  if (NOT_A_SIGN_IN.has(record.outcome)) return [];
  const method = details.sign_in_method ?? null;
  if (record.outcome === 'ok') {
    // A row of an ok sign-in with no session (a refusal answered 2xx) emits nothing.
    if (typeof details.session_id !== 'string') return [];
    // The assurance (`aal`) is the session's own: the emitter reads it (webhook-emitter.ts).
    const data = { identity_id: record.target_identity, session_id: details.session_id };
    return [{ type: 'session.created', data: { ...data, method } }];
  }
  // The username the submitter claimed, and why it failed: never what was typed as a secret
  // (no secret reaches an audit row: sign-in-audit.ts).
  const data = { identity_id: record.target_identity, ...pick(details, ['username']) };
  return [{ type: 'sign_in.failed', data: { ...data, method, reason: record.outcome } }];
}

function identity(type: WebhookEventType, keys: readonly string[] = []) {
  return (record: AuditRecord, details: Details): WebhookEvent[] =>
    record.outcome === 'ok'
      ? [{ type, data: { identity_id: record.target_identity, ...pick(details, keys) } }]
      : [];
}

/**
 * THE table from audited actions to webhook events: every change Tessera makes is audited
 * (audit-log.ts), so following the audit rows, in their own transaction, misses none and
 * adds no call to any service. An action not listed emits nothing.
 */
export const EVENTS_OF_ACTION: Record<
  string,
  (record: AuditRecord, details: Details) => WebhookEvent[]
> = {
  identity_register: identity('identity.created', ['username']),
  identity_register_and_authenticate: (record, details) => [
    ...identity('identity.created', ['username'])(record, details),
    ...signIn(record, details),
  ],
  identity_update: identity('identity.updated', ['fields']),
  identity_set_email: (record, details) => [
    ...identity('identity.updated')(record, details).map((event) => ({
      ...event,
      data: { ...event.data, fields: ['email'] },
    })),
    // An operator setting an address as verified verifies it, too.
    ...(details.verified === true && details.email !== 'removed'
      ? identity('email.verified')(record, details)
      : []),
  ],
  identity_disable: identity('identity.disabled', ['revoked_sessions']),
  identity_enable: identity('identity.enabled'),
  login: signIn,
  authenticate_password: signIn,
  authenticate_link: signIn,
  session_revoke: (record, details) =>
    record.outcome === 'ok' && typeof details.session_id === 'string'
      ? [
          {
            type: 'session.revoked',
            data: { identity_id: record.target_identity, session_id: details.session_id },
          },
        ]
      : [],
  // Every session of the identity (but the one kept): one event, with how many ended.
  identity_revoke_sessions: (record, details) =>
    record.outcome === 'ok' && typeof details.revoked === 'number' && details.revoked > 0
      ? [
          {
            type: 'session.revoked',
            data: { identity_id: record.target_identity, session_id: null, count: details.revoked },
          },
        ]
      : [],
  identity_set_password: identity('password.changed', ['revoked_sessions']),
  // The verification flow (an address confirmed by its code); a new address confirmed is
  // a change of the identity too.
  email_verified: (record, details) => [
    ...(details.email === 'changed'
      ? identity('identity.updated')(record, details).map((event) => ({
          ...event,
          data: { ...event.data, fields: ['email'] },
        }))
      : []),
    ...identity('email.verified')(record, details),
  ],
  second_factor_enable: identity('second_factor.enabled', ['method']),
  second_factor_disable: (record, details) =>
    details.was_enabled === true
      ? identity('second_factor.disabled', ['method'])(record, details)
      : [],
  identity_second_factor_reset: (record, details) =>
    details.was_enabled === true
      ? identity('second_factor.disabled', ['method'])(record, details)
      : [],
  passkey_add: identity('passkey.added', ['passkey_id']),
  passkey_delete: identity('passkey.removed', ['passkey_id']),
  passkeys_reset: (record, details) =>
    typeof details.removed === 'number' && details.removed > 0
      ? identity('passkey.removed', ['removed'])(record, { ...details, passkey_id: null })
      : [],
};

/** The events an audit row emits; none for most rows (reads, refusals, operator actions). */
export function eventsOf(record: AuditRecord): WebhookEvent[] {
  if (!Object.hasOwn(EVENTS_OF_ACTION, record.action)) return [];
  return EVENTS_OF_ACTION[record.action]!(record, JSON.parse(record.details) as Details);
}
