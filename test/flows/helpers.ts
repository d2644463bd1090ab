import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import type { Identity } from '../../src/domain/identities/identity.js';
import type { FlowRecord } from '../../src/domain/login-flows/flow.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { DatabaseKind } from '../helpers/databases.js';

export const PASSWORD = 'correct horse battery';
export const APP_ORIGIN = 'https://app.example';
export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
export const FORM = 'application/x-www-form-urlencoded';

/** Who the tests' own changes (registering, disabling) are audited as: an operator. */
export const operator = { service_name: 'flow-tests', service_id: null };

/**
 * Sign-in rate limits that a file's many sign-ins from one address never reach, for suites
 * testing something else; a suite of one limit overrides that one.
 */
export const LOOSE_SIGN_IN_LIMITS = {
  SERVICE_RATE_LIMIT_LOGIN_IP: '1000/60s',
  SERVICE_RATE_LIMIT_LOGIN_USERNAME: '1000/15m',
  SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
};

export interface FlowTestApp extends TestApp {
  alice: Identity;
}

/** A Tessera with one identity, `alice`, and app.example as its session CORS origin. */
export async function createFlowApp(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): Promise<FlowTestApp> {
  const t = await createTestApp(kind, { SERVICE_SESSION_CORS_ORIGINS: APP_ORIGIN, ...env });
  const alice = await registerIdentity(t.deps, operator, {
    username: 'alice',
    password: PASSWORD,
    display_name: 'Alice Example',
  });
  return Object.assign(t, { alice });
}

export function addIdentity(t: TestApp, username: string): Promise<Identity> {
  return registerIdentity(t.deps, operator, { username, password: PASSWORD });
}

export interface StartedFlow {
  id: string;
  flow_id: string;
  csrf_token: string;
  return_to: string | null;
  state: string;
  issued_at: string;
  expires_at: string;
}

export async function startFlow(
  t: TestApp,
  returnTo?: string,
  headers: Record<string, string> = {},
): Promise<StartedFlow> {
  const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
  const res = await t.inject({ method: 'GET', url: `/v1/login${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as StartedFlow;
}

export function submit(
  t: TestApp,
  flowId: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'POST',
    url: `/v1/flows/${flowId}/password`,
    headers,
    payload: body,
  });
}

/** A correct JSON submission for alice. */
export function signIn(
  t: TestApp,
  flow: StartedFlow,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return submit(
    t,
    flow.id,
    { username: 'alice', password: PASSWORD, csrf_token: flow.csrf_token },
    headers,
  );
}

/** An HTML form post, as a browser sends it. */
export function formPost(
  t: TestApp,
  flowId: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'POST',
    url: `/v1/flows/${flowId}/password`,
    headers: { 'content-type': FORM, accept: BROWSER_ACCEPT, ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

export async function flowRow(t: TestApp, id: string): Promise<FlowRecord> {
  const flow = await t.deps.store.findFlow(id);
  if (!flow) throw new Error(`flow ${id} not found`);
  return flow;
}

/** The exact flat error body and status. */
export { expectError } from '../helpers/core.js';

export function expectValidationError(res: LightMyRequestResponse): void {
  expect(res.statusCode).toBe(422);
  const body = res.json() as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe('validation_error');
}

/** The raw `service_session` token from a response's Set-Cookie. */
export function sessionTokenOf(res: LightMyRequestResponse): string {
  const cookie = res.cookies.find((c) => c.name === 'service_session');
  if (!cookie) throw new Error(`no service_session cookie in ${JSON.stringify(res.headers)}`);
  return cookie.value;
}

/**
 * Counts one more hit on a rate-limit key and returns the count: how the tests read the
 * database's counter for a key (the number of earlier hits is the result minus one).
 */
export async function hitsOn(t: TestApp, key: string): Promise<number> {
  const hit = await t.deps.store.hitRateLimit(key, 60_000, t.clock.now());
  return hit.count - 1;
}

/** 429 with exactly `error` and a positive `retry_after`, mirrored in Retry-After. */
export function expectRateLimited(res: LightMyRequestResponse): void {
  expect(res.statusCode).toBe(429);
  const body = res.json() as { error: string; retry_after: number };
  expect(Object.keys(body).sort()).toEqual(['error', 'retry_after']);
  expect(body.error).toBe('rate_limited');
  expect(body.retry_after).toBeGreaterThan(0);
  expect(res.headers['retry-after']).toBe(String(body.retry_after));
}
