import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createServiceToken,
  revokeServiceToken,
} from '../../src/domain/service-tokens/service-token-service.js';
import { sweep } from '../../src/domain/sweep.js';
import {
  TOKEN_PREFIX,
  type TokenKind,
  hashToken,
  newToken,
  tokenShape,
} from '../../src/lib/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  auditSince,
  auditEntries,
  createIdentity,
  createSession,
  expectError,
  testActor,
  uniqueName,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { flowRow, serviceTokenRow, sessionRow, stored, unmarked } from '../helpers/records.js';
import { recordStoreCalls, type StoreCalls } from '../helpers/store-calls.js';

const MINUTE = 60_000;

/** A token as minted before checksums: 32 random bytes (its checksum fails, 1 - 2^-32). */
function legacyToken(kind: TokenKind): string {
  for (;;) {
    const token = TOKEN_PREFIX[kind] + randomBytes(32).toString('base64url');
    if (tokenShape(kind, token) === 'unchecked') return token;
  }
}

/** One character of the random part replaced: still well-formed, checksum broken. */
function typo(token: string, kind: TokenKind): string {
  const at = TOKEN_PREFIX[kind].length + 10;
  const changed = token[at] === 'x' ? 'y' : 'x';
  const mistyped = token.slice(0, at) + changed + token.slice(at + 1);
  expect(tokenShape(kind, mistyped)).toBe('unchecked');
  return mistyped;
}

/** docs/tokens.md: checksums inside the token, pre-checksum tokens while any remain. */
describeEachDatabase('token checksums', (kind) => {
  let t: TestApp;
  let calls: StoreCalls;
  let introspect: string;
  let revoke: string;
  beforeAll(async () => {
    t = await createTestApp(kind, { SERVICE_FLOW_TTL_MINUTES: '15' });
    introspect = await t.token('introspect');
    revoke = await t.token('revoke');
    calls = recordStoreCalls(t.deps.store);
  });
  afterAll(() => t?.close());
  beforeEach(() => calls.reset());

  const whoami = (token: string) =>
    t.inject({ method: 'GET', url: '/v1/whoami', headers: { cookie: `service_session=${token}` } });
  const verify = (token: string, bearer = introspect) =>
    t.call('POST', '/v1/sessions/verify', bearer, { token });
  const getFlow = (id: string) => t.inject({ method: 'GET', url: `/v1/flows/${id}` });
  // Verify reads its session with its caller's token (findCallerAndSession).
  const SESSION_LOOKUPS = [
    'findSessionByTokenHash',
    'findCallerAndSession',
    'revokeSessionByTokenHash',
  ] as const;

  it('mints every kind with a valid checksum and records the format', async () => {
    const identity = await createIdentity(t);
    const session = await createSession(t, identity.id);
    const service = await createServiceToken(t.deps, testActor, {
      name: uniqueName('svc'),
      grants: ['introspect'],
    });
    const started = await t.inject({
      method: 'GET',
      url: '/v1/login',
      headers: { accept: 'application/json' },
    });
    const flowId = started.json<{ id: string }>().id;
    for (const [kind, token] of [
      ['session', session.token],
      ['service', service.token],
      ['flow', flowId],
    ] as const) {
      expect(token).toMatch(new RegExp(`^${TOKEN_PREFIX[kind]}[A-Za-z0-9_-]{43}$`));
      expect(tokenShape(kind, token)).toBe('crc32');
    }
    expect(service.service.token_format).toBe('crc32');
    expect(await t.deps.store.countLegacyTokens()).toEqual({ session: 0, service: 0, flow: 0 });
    expect((await whoami(session.token)).statusCode).toBe(200);
    expect((await verify(session.token, service.token)).statusCode).toBe(200);
    expect((await getFlow(flowId)).statusCode).toBe(200);
  });

  describe('once no pre-checksum token remains', () => {
    beforeAll(async () => {
      await t.deps.legacyTokens.refresh(t.deps.store);
      expect(t.deps.legacyTokens.snapshot()).toEqual({
        session: false,
        service: false,
        flow: false,
      });
    });

    it('refuses a mistyped session token without a lookup, as an unknown one', async () => {
      const identity = await createIdentity(t);
      const { token } = await createSession(t, identity.id);
      const mistyped = typo(token, 'session');
      calls.reset();

      expectError(await whoami(mistyped), 401, 'invalid_token');
      expect(calls.names).toEqual([]);
      expectError(await verify(mistyped), 401, 'invalid_token');
      expect(calls.count(...SESSION_LOOKUPS)).toBe(0);
      // An unknown token with a valid checksum is looked up, and answered the same.
      expectError(await whoami(newToken('session')), 401, 'invalid_token');
      expectError(await verify(newToken('session')), 401, 'invalid_token');
      expect(calls.count('findSessionByTokenHash', 'findCallerAndSession')).toBe(2);
      // A made-up one too: 32 random bytes.
      calls.reset();
      expectError(await whoami(legacyToken('session')), 401, 'invalid_token');
      expect(calls.names).toEqual([]);
    });

    it('revokes by a mistyped token like an unknown one: 204 and the audit row, no lookup', async () => {
      const identity = await createIdentity(t);
      const { token } = await createSession(t, identity.id);
      const before = (await auditEntries(t)).length;
      calls.reset();
      const res = await t.call('POST', '/v1/sessions/revoke', revoke, {
        token: typo(token, 'session'),
      });
      expect(res.statusCode).toBe(204);
      expect(calls.count(...SESSION_LOOKUPS)).toBe(0);
      const rows = await auditSince(t, before);
      expect(rows.map((row) => [row.action, row.target_identity, row.details])).toEqual([
        ['session_revoke', null, { session_id: null }],
      ]);
      // The session itself is untouched.
      expect((await whoami(token)).statusCode).toBe(200);
    });

    it('refuses a mistyped service token without a lookup', async () => {
      const mistyped = typo(introspect, 'service');
      expectError(await verify(newToken('session'), mistyped), 401, 'invalid_service_token');
      expect(calls.count('findServiceTokenByHash', ...SESSION_LOOKUPS)).toBe(0);
      expectError(
        await verify(newToken('session'), newToken('service')),
        401,
        'invalid_service_token',
      );
      expect(calls.count('findServiceTokenByHash', 'findCallerAndSession')).toBe(1);
    });

    it('answers a mistyped flow id 404 without a lookup', async () => {
      const started = await t.inject({
        method: 'GET',
        url: '/v1/login',
        headers: { accept: 'application/json' },
      });
      const flowId = started.json<{ id: string }>().id;
      calls.reset();
      expectError(await getFlow(typo(flowId, 'flow')), 404, 'not_found');
      expect(calls.count('findFlow')).toBe(0);
      expectError(await getFlow(newToken('flow')), 404, 'not_found');
      expect(calls.count('findFlow')).toBe(1);
    });
  });

  describe('pre-checksum tokens', () => {
    let identityId: string;
    let session: string;
    let expiring: string;
    let service: string;
    let serviceId: string;
    let flowId: string;

    beforeAll(async () => {
      const { store } = t.deps;
      identityId = (await createIdentity(t)).id;
      session = legacyToken('session');
      expiring = legacyToken('session');
      const now = t.clock.now();
      await store.insertSession(
        stored(
          {
            ...sessionRow(identityId, { issued_at: now, expires_at: now + 60 * MINUTE }),
            token: session,
            token_hash: hashToken(session),
          },
          'legacy',
        ),
      );
      await store.insertSession(
        stored(
          {
            ...sessionRow(identityId, { issued_at: now, expires_at: now + 20 * MINUTE }),
            token: expiring,
            token_hash: hashToken(expiring),
          },
          'legacy',
        ),
      );
      service = legacyToken('service');
      const serviceRecord = serviceTokenRow({
        name: uniqueName('old'),
        token_hash: hashToken(service),
        grants: 'introspect',
        token_format: 'legacy',
      });
      serviceId = serviceRecord.id;
      await store.insertServiceToken(serviceRecord);
      flowId = legacyToken('flow');
      await store.insertFlow(
        flowRow({
          id: flowId,
          issued_at: now,
          expires_at: now + 15 * MINUTE,
          token_format: 'legacy',
        }),
      );
      await t.deps.legacyTokens.refresh(store);
    });

    it('keep working while they exist; a checksum failure is then looked up', async () => {
      expect(t.deps.legacyTokens.snapshot()).toEqual({ session: true, service: true, flow: true });
      expect(await t.deps.store.countLegacyTokens()).toEqual({ session: 2, service: 1, flow: 1 });
      expect((await whoami(session)).statusCode).toBe(200);
      expect((await verify(session, service)).json()).toMatchObject({
        identity: { id: identityId },
      });
      expect((await getFlow(flowId)).statusCode).toBe(200);

      calls.reset();
      expectError(await whoami(typo(session, 'session')), 401, 'invalid_token');
      expect(calls.count('findSessionByTokenHash')).toBe(1);
    });

    it('an expired one answers session_expired until the sweep deletes it', async () => {
      t.clock.advance(30 * MINUTE);
      expectError(await whoami(expiring), 401, 'session_expired');
      await sweep(t.deps.store, t.clock);
      await t.deps.legacyTokens.refresh(t.deps.store);
      // The 60-minute one is still live; the flow expired and was swept.
      expect(t.deps.legacyTokens.snapshot()).toEqual({ session: true, service: true, flow: false });
      expectError(await whoami(expiring), 401, 'invalid_token');
      calls.reset();
      expectError(await getFlow(flowId), 404, 'not_found');
      expect(calls.count('findFlow')).toBe(0);
    });

    it('once revoked, are refused offline like any checksum failure', async () => {
      expect(
        (await t.call('POST', '/v1/sessions/revoke', revoke, { token: session })).statusCode,
      ).toBe(204);
      await revokeServiceToken(t.deps, testActor, serviceId);
      await t.deps.legacyTokens.refresh(t.deps.store);
      expect(t.deps.legacyTokens.snapshot()).toEqual({
        session: false,
        service: false,
        flow: false,
      });
      calls.reset();
      expectError(await whoami(session), 401, 'invalid_token');
      expectError(await verify(session), 401, 'invalid_token');
      expectError(await verify(newToken('session'), service), 401, 'invalid_service_token');
      expect(calls.count('findSessionByTokenHash', 'findServiceTokenByHash')).toBe(1);
      // That one lookup is the valid bearer of the second request.
      expect(calls.names.filter((name) => name.startsWith('find'))).toEqual([
        'findServiceTokenByHash',
      ]);
    });

    it('rows written without a format (a process of an older version) count as pre-checksum', async () => {
      const token = legacyToken('session');
      const row = unmarked(
        stored({
          ...sessionRow(identityId, {
            issued_at: t.clock.now(),
            expires_at: t.clock.now() + MINUTE,
          }),
          token,
          token_hash: hashToken(token),
        }),
      );
      await t.deps.store.insertSession(row as Parameters<typeof t.deps.store.insertSession>[0]);
      await t.deps.legacyTokens.refresh(t.deps.store);
      expect(t.deps.legacyTokens.snapshot()?.session).toBe(true);
      expect((await whoami(token)).statusCode).toBe(200);
    });
  });
});
