import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  type FlowTestApp,
  PASSWORD,
  addIdentity,
  createFlowApp,
  expectError,
  hitsOn,
  signIn,
  startFlow,
  submit,
} from './helpers.js';

describeEachDatabase('flow submission rate limits', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_RATE_LIMIT_LOGIN_IP: '4/60s',
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '3/15m',
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
      SERVICE_FLOW_MAX_ATTEMPTS: '100',
    });
  });
  afterAll(() => t?.close());
  // Every test starts with fresh windows for every key.
  beforeEach(() => t.clock.advance(60 * 60_000));

  it('429 per IP: all submissions from one address count, whatever the username', async () => {
    const flow = await startFlow(t);
    for (let i = 0; i < 4; i += 1) {
      const res = await submit(t, flow.id, {
        username: `someone${i}`,
        password: 'x',
        csrf_token: flow.csrf_token,
      });
      expectError(res, 401, 'invalid_credentials');
    }
    const refused = await signIn(t, flow);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: 'rate_limited', retry_after: 60 });
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(await hitsOn(t, 'flow:ip:127.0.0.1')).toBe(5);
    // Refused before the password check: neither counted to the flow nor recorded on it.
    expect((await t.deps.store.findFlow(flow.id))?.failed_attempts).toBe(4);

    t.clock.advance(60_000);
    expect((await signIn(t, flow)).statusCode).toBe(200);
  });

  it('429 per username: attempts count across flows, successful ones too, case-insensitively', async () => {
    await addIdentity(t, 'dave');
    for (const username of ['dave', 'DAVE', 'Dave']) {
      const flow = await startFlow(t);
      const res = await submit(t, flow.id, {
        username,
        password: PASSWORD,
        csrf_token: flow.csrf_token,
      });
      expect(res.statusCode).toBe(200);
      t.clock.advance(60_000); // keep the per-IP window out of the way
    }
    const flow = await startFlow(t);
    const res = await submit(t, flow.id, {
      username: 'dave',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(res.statusCode).toBe(429);
    expect(res.json().error).toBe('rate_limited');
    expect(res.json().retry_after).toBeGreaterThan(0);
    expect(res.json().retry_after).toBeLessThanOrEqual(15 * 60);
    // Another user from the same address is not affected.
    expect((await signIn(t, flow)).statusCode).toBe(200);
  });

  it('shares the per-username limit with POST /v1/authenticate/password', async () => {
    await addIdentity(t, 'erin');
    const direct = await t.token('direct_auth');
    for (let i = 0; i < 3; i += 1) {
      const res = await t.call('POST', '/v1/authenticate/password', direct, {
        username: 'erin',
        password: 'wrong password',
      });
      expect(res.statusCode).toBe(401);
    }
    const flow = await startFlow(t);
    const res = await submit(t, flow.id, {
      username: 'erin',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(res.statusCode).toBe(429);
  });

  it('does not spend limits on submissions refused for the flow or the CSRF token', async () => {
    const flow = await startFlow(t);
    for (let i = 0; i < 10; i += 1) {
      await submit(t, flow.id, { username: 'alice', password: PASSWORD, csrf_token: 'wrong' });
    }
    expect((await signIn(t, flow)).statusCode).toBe(200);
  });
});
