import { expect, it } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks/webhook.js';
import { EVENTS_OF_ACTION, eventsOf } from '../../src/domain/webhooks/webhook-events.js';

const ID = '00000000-0000-4000-8000-000000000001';

function row(action: string, details: Record<string, unknown>, outcome = 'ok'): AuditRecord {
  return {
    id: 'x',
    at: 0,
    action,
    service_name: 'test',
    service_id: null,
    target_identity: ID,
    outcome,
    details: JSON.stringify(details),
  };
}

/** A row each audited change writes (the services' own details), and what it must emit. */
const ROWS: [AuditRecord, string[]][] = [
  [row('identity_register', {}), ['identity.created']],
  [row('identity_update', { fields: ['display_name'] }), ['identity.updated']],
  [
    row('identity_set_email', { email: 'changed', verified: true }),
    ['identity.updated', 'email.verified'],
  ],
  [row('identity_set_email', { email: 'changed', verified: false }), ['identity.updated']],
  [row('email_verified', { email: 'same' }), ['email.verified']],
  [row('identity_disable', {}), ['identity.disabled']],
  [row('identity_enable', {}), ['identity.enabled']],
  [row('login', { session_id: 's', sign_in_method: 'password' }), ['session.created']],
  [row('login', { sign_in_method: 'password' }, 'second_factor_required'), []],
  [
    row('login', { username: 'ada', password: 'never here' }, 'invalid_credentials'),
    ['sign_in.failed'],
  ],
  [row('authenticate_password', { session_id: 's' }), ['session.created']],
  [
    row('identity_register_and_authenticate', { session_id: 's' }),
    ['identity.created', 'session.created'],
  ],
  [row('session_revoke', { session_id: 's' }), ['session.revoked']],
  [row('session_revoke', { session_id: null }), []],
  [row('identity_revoke_sessions', { revoked: 2 }), ['session.revoked']],
  [row('identity_set_password', { credential: 'password' }), ['password.changed']],
  [row('second_factor_enable', { method: 'totp' }), ['second_factor.enabled']],
  [row('second_factor_disable', { method: 'totp', was_enabled: true }), ['second_factor.disabled']],
  [row('second_factor_disable', { method: 'totp', was_enabled: false }), []],
  [row('identity_second_factor_reset', { was_enabled: true }), ['second_factor.disabled']],
  [row('passkey_add', { passkey_id: 'p' }), ['passkey.added']],
  [row('passkey_delete', { passkey_id: 'p' }), ['passkey.removed']],
  [row('passkeys_reset', { removed: 2 }), ['passkey.removed']],
  [row('session_verify', {}), []],
  [row('identity_update', {}, 'validation_error'), []],
  [row('constructor', {}), []],
];

it.each(ROWS)('%o emits its events', (record, expected) => {
  expect(eventsOf(record).map((event) => event.type)).toEqual(expected);
});

it('every event type is emitted by some audited change', () => {
  const emitted = new Set(ROWS.flatMap(([, types]) => types));
  expect([...emitted].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
  for (const [record] of ROWS) {
    if (eventsOf(record).length > 0)
      expect(Object.hasOwn(EVENTS_OF_ACTION, record.action)).toBe(true);
  }
});

it('a failed sign-in carries the claimed username, never a secret', () => {
  const [event] = eventsOf(
    row('login', { username: 'ada', password: 'hunter2' }, 'invalid_credentials'),
  );
  expect(event!.data).toEqual({
    identity_id: ID,
    username: 'ada',
    method: null,
    reason: 'invalid_credentials',
  });
});
