import type { AuditRecord } from '../../src/domain/audit/audit.js';
import type { IdentityRecord } from '../../src/domain/identities/identity.js';
import type { LinkRecord } from '../../src/domain/links/link.js';
import type { FlowRecord } from '../../src/domain/login-flows/flow.js';
import type { ServiceTokenRecord } from '../../src/domain/service-tokens/service-token.js';
import type { SessionRecord } from '../../src/domain/sessions/session.js';
import { newId } from '../../src/lib/ids.js';
import { TOKEN_FORMAT, type TokenFormat, hashToken, newToken } from '../../src/lib/tokens.js';

/** Plain records for storage-level tests; every field can be overridden. */
export const T0 = Date.parse('2026-11-21T10:00:00.000Z');

export function identityRow(overrides: Partial<IdentityRecord> = {}): IdentityRecord {
  const id = newId();
  return {
    id,
    username: `user-${id.slice(-12)}`,
    display_name: 'Some One',
    avatar_url: null,
    email: null,
    email_verified_at: null,
    state: 'active',
    password_hash: '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA',
    created_at: T0,
    updated_at: T0,
    ...overrides,
  };
}

export function sessionRow(
  identityId: string,
  overrides: Partial<SessionRecord> = {},
): SessionRecord & { token: string } {
  const token = newToken('session');
  return {
    token,
    id: newId(),
    token_hash: hashToken(token),
    identity_id: identityId,
    authenticated_via: 'password',
    aal: 'aal1',
    issued_at: T0,
    expires_at: T0 + 3_600_000,
    revoked_at: null,
    last_used_at: null,
    ...overrides,
  };
}

/**
 * Drops the test-only `token` field before handing a session to the store, with the format
 * `newToken` mints (a test of pre-checksum tokens says `legacy`).
 */
export function stored(
  { token: _token, ...record }: SessionRecord & { token: string },
  tokenFormat: TokenFormat = TOKEN_FORMAT,
): SessionRecord & { token_format: TokenFormat } {
  return { ...record, token_format: tokenFormat };
}

/** A session row as a writer that predates token formats inserts it: no `token_format`. */
export function unmarked({
  token_format: _format,
  ...record
}: SessionRecord & { token_format: TokenFormat }): SessionRecord {
  return record;
}

export function serviceTokenRow(overrides: Partial<ServiceTokenRecord> = {}): ServiceTokenRecord {
  const id = newId();
  return {
    id,
    name: `svc-${id.slice(-12)}`,
    token_hash: hashToken(newToken('service')),
    grants: 'introspect identity_read',
    created_at: T0,
    revoked_at: null,
    token_format: TOKEN_FORMAT,
    ...overrides,
  };
}

export function auditRow(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: newId(),
    at: T0,
    action: 'identity_read',
    service_name: 'svc',
    service_id: newId(),
    target_identity: null,
    outcome: 'ok',
    details: '{}',
    ...overrides,
  };
}

export function flowRow(
  overrides: Partial<FlowRecord & { token_format: TokenFormat }> = {},
): FlowRecord & { token_format: TokenFormat } {
  return {
    id: newToken('flow'),
    kind: 'login',
    csrf_token: 'csrf-secret',
    return_to: null,
    state: 'created',
    failed_attempts: 0,
    issued_at: T0,
    expires_at: T0 + 15 * 60_000,
    token_format: TOKEN_FORMAT,
    identity_id: null,
    first_method: null,
    ...overrides,
  };
}

export function linkRow(identityId: string, overrides: Partial<LinkRecord> = {}): LinkRecord {
  return {
    provider: 'email',
    subject: `${newId()}@example.org`,
    identity_id: identityId,
    verified_at: null,
    linked_at: T0,
    ...overrides,
  };
}
