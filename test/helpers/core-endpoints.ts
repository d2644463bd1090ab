import type { InjectOptions } from 'fastify';
import { expect } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import { GRANTS } from '../../src/domain/service-tokens/service-token.js';
import { newToken } from '../../src/lib/tokens.js';
import type { TestApp } from './app.js';
import {
  auditEntries,
  auditSince,
  createIdentity,
  createSession,
  PASSWORD,
  uniqueName,
} from './core.js';

export interface CoreRequest {
  method: InjectOptions['method'];
  url: string;
  body?: unknown;
}

export interface CoreEndpoint {
  name: string;
  grant: string;
  /** The audit action the route records. */
  action: string;
  /** Status of a well-formed request by a caller holding the grant. */
  ok: number;
  /** Builds a well-formed request (creating whatever it needs first). */
  request(t: TestApp): Promise<CoreRequest>;
}

/**
 * A request builder for `method` on `/v1/identities/{id}` + `path` of an identity it
 * creates first; `body` is drawn afresh for each request.
 */
export function onNewIdentity(
  method: CoreRequest['method'],
  path = '',
  body?: () => unknown,
): CoreEndpoint['request'] {
  return async (t) => {
    const identity = await createIdentity(t);
    const url = `/v1/identities/${identity.id}${path}`;
    return body === undefined ? { method, url } : { method, url, body: body() };
  };
}

/** A request builder posting to `url` the token of a session it creates first. */
function onNewSession(url: string): CoreEndpoint['request'] {
  return async (t) => {
    const session = await createSession(t, (await createIdentity(t)).id);
    return { method: 'POST', url, body: { token: session.token } };
  };
}

/** The core endpoints of docs/api.md 2.5 and 4 with the grant each requires. */
export const CORE_ENDPOINTS: CoreEndpoint[] = [
  {
    name: 'GET /v1/identities/{id}',
    grant: 'identity_read',
    action: 'identity_read',
    ok: 200,
    request: onNewIdentity('GET'),
  },
  {
    name: 'GET /v1/identities?username=',
    grant: 'identity_read',
    action: 'identity_lookup',
    ok: 200,
    async request(t) {
      const identity = await createIdentity(t);
      return { method: 'GET', url: `/v1/identities?username=${identity.username}` };
    },
  },
  {
    name: 'GET /v1/identities?email=',
    grant: 'identity_read',
    action: 'identity_lookup',
    ok: 200,
    async request(t) {
      const identity = await createIdentity(t);
      const email = `${identity.username}@example.com`;
      await t.deps.store.setIdentityEmail(identity.id, email, null, t.clock.now());
      return { method: 'GET', url: `/v1/identities?email=${encodeURIComponent(email)}` };
    },
  },
  {
    name: 'PUT /v1/identities/{id}/email',
    grant: 'identity_write',
    action: 'identity_set_email',
    ok: 200,
    request: onNewIdentity('PUT', '/email', () => ({ email: `${uniqueName()}@example.com` })),
  },
  {
    name: 'PATCH /v1/identities/{id}/profile',
    grant: 'identity_write',
    action: 'identity_update',
    ok: 200,
    request: onNewIdentity('PATCH', '/profile', () => ({ display_name: 'New Name' })),
  },
  {
    name: 'PATCH /v1/identities/{id} (alias)',
    grant: 'identity_write',
    action: 'identity_update',
    ok: 200,
    request: onNewIdentity('PATCH', '', () => ({ display_name: 'New Name' })),
  },
  {
    name: 'POST /v1/register',
    grant: 'direct_auth',
    action: 'identity_register',
    ok: 201,
    request: async () => ({
      method: 'POST',
      url: '/v1/register',
      body: { username: uniqueName(), password: PASSWORD },
    }),
  },
  {
    name: 'POST /v1/register-and-authenticate',
    grant: 'direct_auth',
    action: 'identity_register_and_authenticate',
    ok: 201,
    request: async () => ({
      method: 'POST',
      url: '/v1/register-and-authenticate',
      body: { username: uniqueName(), password: PASSWORD },
    }),
  },
  {
    name: 'POST /v1/authenticate/password',
    grant: 'direct_auth',
    action: 'authenticate_password',
    ok: 200,
    async request(t) {
      const identity = await createIdentity(t);
      return {
        method: 'POST',
        url: '/v1/authenticate/password',
        body: { username: identity.username, password: PASSWORD },
      };
    },
  },
  {
    name: 'POST /v1/sessions/verify',
    grant: 'introspect',
    action: 'session_verify',
    ok: 200,
    request: onNewSession('/v1/sessions/verify'),
  },
  {
    name: 'POST /v1/sessions/revoke',
    grant: 'revoke',
    action: 'session_revoke',
    ok: 204,
    request: onNewSession('/v1/sessions/revoke'),
  },
  {
    name: 'POST /v1/identities/{id}/revoke-sessions',
    grant: 'revoke',
    action: 'identity_revoke_sessions',
    ok: 200,
    request: onNewIdentity('POST', '/revoke-sessions'),
  },
];

/** Sends a core request with the given bearer (null: no Authorization header). */
export function send(t: TestApp, request: CoreRequest, bearer: string | null) {
  return t.call(request.method, request.url, bearer, request.body);
}

/** Sends with a raw Authorization header value. */
export function sendWithHeader(t: TestApp, request: CoreRequest, authorization: string) {
  return t.inject({
    method: request.method,
    url: request.url,
    headers: { authorization },
    ...(request.body === undefined ? {} : { payload: request.body as object }),
  });
}

/**
 * Calls `endpoint` allowed, forbidden, with an unknown token and with none; asserts the
 * audit rows of its action that this leaves (ok, forbidden, invalid_service_token: the
 * tokenless call leaves none) and returns them.
 */
export async function expectEachOutcomeAudited(
  t: TestApp,
  endpoint: CoreEndpoint,
): Promise<AuditEntry[]> {
  const allowed = await t.token(endpoint.grant);
  const other = await t.token(GRANTS.find((grant) => grant !== endpoint.grant)!);
  const services = await t.deps.store.listServiceTokens();
  const [allowedId, otherId] = services.slice(-2).map((service) => service.id);
  const before = (await auditEntries(t)).length;
  expect((await send(t, await endpoint.request(t), allowed)).statusCode).toBe(endpoint.ok);
  expect((await send(t, await endpoint.request(t), other)).statusCode).toBe(403);
  expect((await send(t, await endpoint.request(t), newToken('service'))).statusCode).toBe(401);
  expect((await send(t, await endpoint.request(t), null)).statusCode).toBe(401);
  const rows = (await auditSince(t, before)).filter((row) => row.action === endpoint.action);
  expect(rows.map((row) => [row.outcome, row.service_id])).toEqual([
    ['ok', allowedId],
    ['forbidden', otherId],
    ['invalid_service_token', null],
  ]);
  return rows;
}
