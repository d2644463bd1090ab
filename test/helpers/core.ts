import { UNKNOWN_DEVICE } from '../../src/domain/sessions/session.js';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { type AuditEntry, toAuditEntry } from '../../src/domain/audit/audit.js';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import type { Identity, IdentityRecord } from '../../src/domain/identities/identity.js';
import { createServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { mintSession } from '../../src/domain/sessions/session-service.js';
import { newToken } from '../../src/lib/tokens.js';
import type { TestApp } from './app.js';

/** The actor the tests use when they act through the domain, as the CLI would. */
export const testActor = { service_name: 'test-setup', service_id: null };

export const PASSWORD = 'correct horse battery';

/** Asserts the exact flat error body: `{ error }` and nothing else. */
/**
 * Exactly `{error: code}`, or with `message` given, `{error, message}` with the message
 * matching (a refusal that tells the user what to do: sign in again, reload the page).
 */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  message?: RegExp,
): void {
  const body = message ? { error: code, message: expect.stringMatching(message) } : { error: code };
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body });
}

export const CSRF_REFUSAL = /reload it and try again/;
export const RECENT_SIGN_IN_REFUSAL = /needs a recent sign-in/;
/** A credential change from an aal1 session of an identity with a second factor or passkey. */
export const STEP_UP_REFUSAL = /needs a sign-in with your second factor/;

/** 422 with exactly `error` and a human-readable `message` (matched when given). */
export function expectValidation(res: LightMyRequestResponse, message?: RegExp | string): void {
  expect(res.statusCode).toBe(422);
  const body = res.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe('validation_error');
  expect(typeof body.message).toBe('string');
  if (message instanceof RegExp) expect(body.message).toMatch(message);
  else if (message !== undefined) expect(body.message).toBe(message);
}

let counter = 0;
/** A username no other test in the process uses. */
export function uniqueName(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A service token with a unique name; unlike `t.token`, safe for a second app sharing the
 * database of the first (whose token names would collide).
 */
export async function namedToken(t: TestApp, ...grants: string[]): Promise<string> {
  const created = await createServiceToken(t.deps, testActor, { name: uniqueName('svc'), grants });
  return created.token;
}

/** Creates an identity through the domain (as `tessera identity create` does). */
export function createIdentity(
  t: TestApp,
  username = uniqueName(),
  password = PASSWORD,
): Promise<Identity> {
  return registerIdentity(t.deps, testActor, { username, password });
}

export async function identityRecord(t: TestApp, id: string): Promise<IdentityRecord> {
  const record = await t.deps.store.findIdentityById(id);
  if (!record) throw new Error(`identity ${id} not found`);
  return record;
}

/** Mints a password session for the identity directly; returns the raw token and session id. */
export async function createSession(
  t: TestApp,
  identityId: string,
): Promise<{ token: string; id: string }> {
  const record = await identityRecord(t, identityId);
  const minted = await t.deps.store.transaction((tx) =>
    mintSession(t.deps, tx, record, { id: 'password', assurance: 'aal1' }, UNKNOWN_DEVICE),
  );
  return { token: minted.token, id: minted.session.id };
}

/** Every audit row written so far (buffered ones flushed first), oldest first. */
export async function auditEntries(t: TestApp): Promise<AuditEntry[]> {
  await t.deps.audit.flush();
  const records = await t.deps.store.listAuditRecords(10_000);
  return records.map(toAuditEntry).reverse();
}

/** Audit rows added after `before` entries existed. */
export async function auditSince(t: TestApp, before: number): Promise<AuditEntry[]> {
  return (await auditEntries(t)).slice(before);
}

/**
 * Bearer values that must all be refused with 401 `invalid_service_token`, given a valid
 * service token, a revoked one and a session token.
 */
export function badBearers(valid: string, revoked: string, session: string): [string, string][] {
  const last = valid.at(-1) === 'A' ? 'B' : 'A';
  return [
    ['unknown', newToken('service')],
    ['revoked', revoked],
    ['mistyped (one character changed)', valid.slice(0, -1) + last],
    ['truncated', valid.slice(0, -1)],
    ['wrong prefix', valid.replace('tess_svc_', 'tess_svx_')],
    ['a session token', session],
    ['garbage', 'not-a-token'],
  ];
}
