import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newToken } from '../../src/lib/tokens.js';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import { revokeServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  PASSWORD,
  auditEntries,
  createIdentity,
  createSession,
  expectError,
  expectValidation,
  testActor,
  uniqueName,
} from '../helpers/core.js';
import { recordStoreCalls } from '../helpers/store-calls.js';
import { CORE_ENDPOINTS, sendWithHeader } from '../helpers/core-endpoints.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  createGrantTokens,
  describeGrantMatrix,
  type GrantTokens,
} from '../helpers/grant-tokens.js';

/** SPEC.md 5.1 and 5.2: bearer authentication and the grant each core endpoint requires. */
describeEachDatabase('service tokens and grants', (kind) => {
  let t: TestApp;
  let tokens: GrantTokens;

  beforeAll(async () => {
    t = await createTestApp(kind);
    tokens = await createGrantTokens(t);
  });
  afterAll(() => t?.close());

  describeGrantMatrix(CORE_ENDPOINTS, () => ({ t, tokens }));

  it('a refused caller changes nothing (forbidden register creates no identity)', async () => {
    const res = await t.call('POST', '/v1/register', tokens.only('identity_write'), {
      username: 'nobody-here',
      password: 'correct horse battery',
    });
    expectError(res, 403, 'forbidden', /^this service token lacks the direct_auth grant$/);
    expect(await t.deps.store.findIdentityByUsername('nobody-here')).toBeUndefined();
  });

  it('refuses before reading the body: no token and a malformed body is still 401', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/v1/register',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expectError(res, 401, 'missing_service_token');
  });

  describe('verify, whose caller is read with its session', () => {
    const verify = (bearer: string, payload: string) =>
      t.inject({
        method: 'POST',
        url: '/v1/sessions/verify',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        payload,
      });
    const unknown = () => newToken('service');

    it('answers in the order of any route: unknown token, then grant, then the body', async () => {
      const session = JSON.stringify({ token: newToken('session') });
      for (const payload of ['{not json', '{"token": 5}', '', 'x'.repeat(70_000), session]) {
        expectError(await verify(unknown(), payload), 401, 'invalid_service_token');
        expectError(await verify(tokens.revoked, payload), 401, 'invalid_service_token');
        expectError(
          await verify(tokens.only('revoke'), payload),
          403,
          'forbidden',
          /lacks the introspect grant/,
        );
      }
      const caller = tokens.only('introspect');
      expectValidation(await verify(caller, '{not json'), 'request body is not valid JSON');
      expectValidation(await verify(caller, 'x'.repeat(70_000)), 'request body exceeds 64 KiB');
      expect((await verify(caller, '{"token": 5}')).statusCode).toBe(422);
      expectError(await verify(caller, session), 401, 'invalid_token');
    });

    it('reads the caller and the session in one read, and audits the caller', async () => {
      const identity = await createIdentity(t);
      const { token } = await createSession(t, identity.id);
      const calls = recordStoreCalls(t.deps.store);
      const res = await verify(tokens.only('introspect'), JSON.stringify({ token }));
      expect(res.statusCode).toBe(200);
      expect(calls.names.filter((name) => name.startsWith('find'))).toEqual([
        'findCallerAndSession',
      ]);
      const rows = (await auditEntries(t)).filter((entry) => entry.action === 'session_verify');
      expect(rows.at(-1)).toMatchObject({
        service_name: expect.any(String),
        target_identity: identity.id,
        outcome: 'ok',
      });
    });
  });

  describe('the identity lookup, whose caller is read with the identity', () => {
    const lookup = (bearer: string, id: string) =>
      t.inject({
        method: 'GET',
        url: `/v1/identities/${id}`,
        headers: { authorization: `Bearer ${bearer}` },
      });

    it('answers in the order of any route: unknown token, then grant, then the identity', async () => {
      const identity = await createIdentity(t);
      for (const id of [identity.id, 'not-a-uuid']) {
        expectError(await lookup(newToken('service'), id), 401, 'invalid_service_token');
        expectError(await lookup('tess_v_malformed', id), 401, 'invalid_service_token');
        expectError(
          await lookup(tokens.only('introspect'), id),
          403,
          'forbidden',
          /^this service token lacks the identity_read grant$/,
        );
      }
      const caller = tokens.only('identity_read');
      expectError(await lookup(caller, 'not-a-uuid'), 404, 'not_found');
      expectError(await lookup(caller, randomUUID()), 404, 'not_found');
    });

    it('reads the caller and the identity in one read, and audits the caller', async () => {
      const identity = await createIdentity(t);
      const calls = recordStoreCalls(t.deps.store);
      const res = await lookup(tokens.only('identity_read'), identity.id);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: identity.id, username: identity.username });
      expect(calls.names.filter((name) => name.startsWith('find'))).toEqual([
        'findCallerAndIdentity',
      ]);
      calls.reset();
      expectError(await lookup(tokens.only('identity_read'), 'not-a-uuid'), 404, 'not_found');
      expect(calls.names.filter((name) => name.startsWith('find'))).toEqual([
        'findServiceTokenByHash',
      ]);
      const rows = (await auditEntries(t)).filter((entry) => entry.action === 'identity_read');
      expect(rows.slice(-2)).toMatchObject([
        { service_name: expect.any(String), target_identity: identity.id, outcome: 'ok' },
        { service_name: expect.any(String), target_identity: null, outcome: 'not_found' },
      ]);
    });
  });

  describe('the lookup by username or email, whose caller is read with the identity', () => {
    const lookup = (bearer: string, query: string) =>
      t.inject({
        method: 'GET',
        url: `/v1/identities?${query}`,
        headers: { authorization: `Bearer ${bearer}` },
      });
    const finds = (calls: { names: string[] }) =>
      calls.names.filter((name) => name.startsWith('find'));

    it('answers in the order of any route: unknown token, then grant, then the identity', async () => {
      const identity = await createIdentity(t);
      for (const query of [`username=${identity.username}`, 'username=no%20such', 'email=a@b.c']) {
        expectError(await lookup(newToken('service'), query), 401, 'invalid_service_token');
        expectError(await lookup(tokens.only('introspect'), query), 403, 'forbidden', /grant$/);
      }
      const caller = tokens.only('identity_read');
      expectError(await lookup(caller, 'username=no%20such'), 404, 'not_found');
      expectError(await lookup(caller, 'username=nobody-here'), 404, 'not_found');
      const both = `username=${identity.username}&email=a@b.c`;
      expectError(await lookup(caller, both), 422, 'validation_error', /exactly one/);
    });

    it('reads the caller and the identity in one read; other queries read the caller alone', async () => {
      const email = `${randomUUID()}@example.com`;
      const identity = await registerIdentity(t.deps, testActor, {
        username: uniqueName(),
        password: PASSWORD,
        email,
      });
      const caller = tokens.only('identity_read');
      const calls = recordStoreCalls(t.deps.store);
      for (const query of [`username=${identity.username}`, `email=${email.toUpperCase()}`]) {
        calls.reset();
        const res = await lookup(caller, query);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ id: identity.id, username: identity.username });
        expect(finds(calls)).toEqual(['findCallerAndIdentity']);
      }
      calls.reset();
      expectError(await lookup(caller, 'email=nobody@example.com'), 404, 'not_found');
      expect(finds(calls)).toEqual(['findCallerAndIdentity']);
      calls.reset();
      expectError(await lookup(caller, 'username=nobody-here'), 404, 'not_found');
      expect(finds(calls)).toEqual(['findCallerAndIdentity']);
      for (const query of [
        'username=no%20such',
        'email=not-an-address',
        `username=${identity.username}&username=${identity.username}`,
        `email=${email}&email=${email}`,
        `username=${identity.username}&email=a@b.c`,
      ]) {
        calls.reset();
        expect((await lookup(caller, query)).statusCode).toBeGreaterThanOrEqual(400);
        expect(finds(calls)).toEqual(['findServiceTokenByHash']);
      }
      const rows = (await auditEntries(t)).filter((entry) => entry.action === 'identity_lookup');
      // One row per lookup; the address itself stays out of the row.
      expect(rows.slice(-9, -5)).toMatchObject([
        { target_identity: identity.id, outcome: 'ok', details: { username: identity.username } },
        { target_identity: identity.id, outcome: 'ok', details: { by: 'email' } },
        { target_identity: null, outcome: 'not_found', details: { by: 'email' } },
        { target_identity: null, outcome: 'not_found', details: { username: 'nobody-here' } },
      ]);
    });
  });

  it('a token revoked while in use is refused on the next request', async () => {
    const token = await t.token('identity_read');
    const identity = await createIdentity(t);
    expect((await t.call('GET', `/v1/identities/${identity.id}`, token)).statusCode).toBe(200);
    const services = await t.deps.store.listServiceTokens();
    await revokeServiceToken(t.deps, testActor, services.at(-1)!.name);
    expectError(
      await t.call('GET', `/v1/identities/${identity.id}`, token),
      401,
      'invalid_service_token',
    );
  });

  it('accepts the scheme case-insensitively ("bearer")', async () => {
    const identity = await createIdentity(t);
    const res = await sendWithHeader(
      t,
      { method: 'GET', url: `/v1/identities/${identity.id}` },
      `bearer ${tokens.only('identity_read')}`,
    );
    expect(res.statusCode).toBe(200);
  });
});
