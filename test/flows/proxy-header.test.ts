import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toAuditEntry } from '../../src/domain/audit/audit.js';
import { addressKey } from '../../src/domain/login-flows/address-key.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  type FlowTestApp,
  createFlowApp,
  expectError,
  expectRateLimited,
  expectValidationError,
  hitsOn,
  signIn,
  startFlow,
  submit,
} from './helpers.js';

const HEADER = 'x-service-client-ip';

describeEachDatabase('X-Service-Client-Ip on the browser endpoints', (kind) => {
  let t: FlowTestApp;
  let proxy: string;
  let noProxyGrant: string;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '2/60s',
      SERVICE_RATE_LIMIT_LOGIN_IP: '2/60s',
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '1000/15m',
    });
    proxy = await t.token('browser_proxy');
    noProxyGrant = await t.token('introspect', 'direct_auth', 'revoke');
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  const create = (headers: Record<string, string>) =>
    t.inject({ method: 'GET', url: '/v1/login', headers });

  // Each request shape the header can arrive on: flow creation, flow read, password submit.
  const endpoints: [
    string,
    (headers: Record<string, string>) => Promise<LightMyRequestResponse>,
  ][] = [
    ['GET /v1/login', create],
    [
      'GET /v1/flows/{id}',
      async (headers) => {
        const flow = await startFlow(t);
        return t.inject({ method: 'GET', url: `/v1/flows/${flow.id}`, headers });
      },
    ],
    ['POST /v1/flows/{id}/password', async (headers) => signIn(t, await startFlow(t), headers)],
  ];

  describe.each(endpoints)('%s', (_name, send) => {
    it('401 missing_service_token when stated without a bearer token', async () => {
      expectError(await send({ [HEADER]: '203.0.113.5' }), 401, 'missing_service_token');
    });

    it('401 invalid_service_token with an unknown bearer token', async () => {
      const res = await send({
        [HEADER]: '203.0.113.5',
        authorization: `Bearer tess_svc_${'Z'.repeat(43)}`,
      });
      expectError(res, 401, 'invalid_service_token');
    });

    it('403 forbidden with a token lacking browser_proxy', async () => {
      const res = await send({ [HEADER]: '203.0.113.5', authorization: `Bearer ${noProxyGrant}` });
      expectError(res, 403, 'forbidden');
    });

    it.each(['not-an-ip', '203.0.113.5, 10.0.0.1', '999.1.1.1', '', '::g'])(
      '422 for the malformed address %j',
      async (address) => {
        const res = await send({ [HEADER]: address, authorization: `Bearer ${proxy}` });
        expectValidationError(res);
        expect(res.json().message).toMatch(/X-Service-Client-Ip/i);
      },
    );

    it('accepts a valid address from a browser_proxy caller', async () => {
      const res = await send({ [HEADER]: '198.51.100.77', authorization: `Bearer ${proxy}` });
      expect(res.statusCode).toBe(200);
    });
  });

  it('keys flow creation by the stated address, not the proxy connection', async () => {
    const as = (address: string) => ({ [HEADER]: address, authorization: `Bearer ${proxy}` });
    expect((await create(as('203.0.113.7'))).statusCode).toBe(200);
    expect((await create(as('203.0.113.7'))).statusCode).toBe(200);
    expectRateLimited(await create(as('203.0.113.7')));
    // Another end user behind the same proxy, and the proxy's own address, are separate.
    expect((await create(as('203.0.113.8'))).statusCode).toBe(200);
    expect((await create({})).statusCode).toBe(200);
    expect(await hitsOn(t, 'flow-create:ip:203.0.113.7')).toBe(3);
    expect(await hitsOn(t, 'flow-create:ip:203.0.113.8')).toBe(1);
  });

  it('keys password submissions by the stated address', async () => {
    const as = (address: string) => ({ [HEADER]: address, authorization: `Bearer ${proxy}` });
    const flow = await startFlow(t);
    const wrong = { username: 'alice', password: 'wrong', csrf_token: flow.csrf_token };
    await submit(t, flow.id, wrong, as('2001:db8:1:2::10'));
    await submit(t, flow.id, wrong, as('2001:db8:1:2::11'));
    // Same /64: the third attempt is over the limit of 2.
    expectRateLimited(await signIn(t, flow, as('2001:db8:1:2:ffff::1')));
    expect(await hitsOn(t, 'flow:ip:2001:db8:1:2::/64')).toBe(3);
    // A different /64, and the unproxied peer, still get through.
    expect((await signIn(t, flow, as('2001:db8:1:3::1'))).statusCode).toBe(200);
  });

  it('ignores a non-bearer Authorization header (a site behind HTTP Basic auth)', async () => {
    const basic = { authorization: 'Basic dXNlcjpwYXNz' };
    const flow = await startFlow(t, undefined, basic);
    expect(
      (await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}`, headers: basic })).statusCode,
    ).toBe(200);
    expect((await signIn(t, flow, basic)).statusCode).toBe(200);
    // With an address stated, the proxy has to be a bearer token after all.
    const stated = await create({ ...basic, [HEADER]: '192.0.2.9' });
    expectError(stated, 401, 'invalid_service_token');
  });

  it('a proxy token never authenticates the end user, and its use is audited', async () => {
    const all = await t.token('browser_proxy', 'introspect', 'direct_auth', 'revoke');
    const flow = await startFlow(t);
    const res = await submit(
      t,
      flow.id,
      { username: 'alice', password: 'wrong' },
      { authorization: `Bearer ${all}`, [HEADER]: '192.0.2.1' },
    );
    expectError(res, 401, 'invalid_token');
    const whoami = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      headers: { authorization: `Bearer ${all}` },
    });
    expectError(whoami, 401, 'invalid_token');

    await t.deps.audit.flush();
    const rows = (await t.deps.store.listAuditRecords(50)).map(toAuditEntry);
    const row = rows.find((entry) => entry.action === 'flow_password');
    expect(row).toMatchObject({ outcome: 'invalid_token' });
    expect(row?.details).toMatchObject({ method: 'POST', path: '/v1/flows/:id/password' });
  });
});

describe('addressKey', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:cb00:7109', '203.0.113.9'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0000:ffff:0:0:1', '2001:db8:0:0::/64'],
    ['2001:db8:aa:bb:cc:dd:ee:ff', '2001:db8:aa:bb::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s -> %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
