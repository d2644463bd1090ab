import { afterAll, beforeAll, expect, it } from 'vitest';
import { revokeServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, expectError, testActor } from '../helpers/core.js';
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
