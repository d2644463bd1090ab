import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { GRANTS } from '../../src/domain/service-tokens/service-token.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { auditSince, createIdentity, expectError, testActor } from '../helpers/core.js';
import { CORE_ENDPOINTS, send, sendWithHeader } from '../helpers/core-endpoints.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  createGrantTokens,
  expectBadBearersRefused,
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

  describe.each(CORE_ENDPOINTS)('$name', (endpoint) => {
    it(`answers ${endpoint.ok} with grant ${endpoint.grant}`, async () => {
      const res = await send(t, await endpoint.request(t), tokens.only(endpoint.grant));
      expect(res.statusCode).toBe(endpoint.ok);
    });

    const others = GRANTS.filter((grant) => grant !== endpoint.grant);
    it.each(others)('answers 403 forbidden with only grant %s', async (grant) => {
      const before = (await auditSince(t, 0)).length;
      const res = await send(t, await endpoint.request(t), tokens.only(grant));
      expectError(res, 403, 'forbidden');
      const rows = await auditSince(t, before);
      expect(rows.filter((row) => row.outcome === 'forbidden')).toEqual([
        expect.objectContaining({ action: endpoint.action, service_name: expect.any(String) }),
      ]);
    });

    it('answers 403 forbidden with every grant but the required one', async () => {
      const token = await t.token(...others);
      expectError(await send(t, await endpoint.request(t), token), 403, 'forbidden');
    });

    it('answers 401 missing_service_token without an Authorization header', async () => {
      expectError(await send(t, await endpoint.request(t), null), 401, 'missing_service_token');
    });

    it('answers 401 invalid_service_token for unusable bearers', async () => {
      const request = await endpoint.request(t);
      const valid = tokens.only(endpoint.grant);
      await expectBadBearersRefused((bearer) => send(t, request, bearer), valid, tokens);
      for (const header of [`Basic ${valid}`, 'Bearer', '', `Token ${valid}`]) {
        const res = await sendWithHeader(t, request, header);
        expect({ header, status: res.statusCode, body: res.json() }).toEqual({
          header,
          status: 401,
          body: { error: 'invalid_service_token' },
        });
      }
    });
  });

  it('a refused caller changes nothing (forbidden register creates no identity)', async () => {
    const res = await t.call('POST', '/v1/register', tokens.only('identity_write'), {
      username: 'nobody-here',
      password: 'correct horse battery',
    });
    expectError(res, 403, 'forbidden');
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
