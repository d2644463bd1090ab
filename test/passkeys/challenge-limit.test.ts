import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { expectError, expectRateLimited, hitsOn, startFlow } from '../flows/helpers.js';
import { ORIGIN, type PasskeyTestApp, createPasskeyApp } from './helpers.js';

const UNKNOWN_FLOW = 'tess_f_0000000000000000000000000000000000000000000';

/** `POST /v1/flows/{id}/passkey/options` per client address: SERVICE_RATE_LIMIT_CHALLENGE_IP. */
describeEachDatabase('the per-address limit on flow challenges', (kind) => {
  let t: PasskeyTestApp;
  let proxy: string;
  beforeAll(async () => {
    t = await createPasskeyApp(kind, {
      SERVICE_RATE_LIMIT_CHALLENGE_IP: '3/60s',
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
      SERVICE_RATE_LIMIT_LOGIN_IP: '1000/60s',
    });
    proxy = await t.token('browser_proxy');
  });
  afterAll(() => t?.close());
  // Every test starts with fresh windows for every key.
  beforeEach(() => t.clock.advance(60 * 60_000));

  const options = (
    id: string,
    csrf: string,
    headers: Record<string, string> = {},
    remoteAddress = '127.0.0.1',
  ) =>
    t.inject({
      method: 'POST',
      url: `/v1/flows/${id}/passkey/options`,
      headers: { origin: ORIGIN, ...headers },
      remoteAddress,
      payload: { csrf_token: csrf },
    });

  it('429 rate_limited with retry_after past the limit; the window passing lets it through', async () => {
    const flow = await startFlow(t);
    for (let i = 0; i < 3; i += 1) {
      const res = await options(flow.id, flow.csrf_token);
      expect(res.statusCode, res.body).toBe(200);
    }
    const refused = await options(flow.id, flow.csrf_token);
    expectRateLimited(refused);
    expect(refused.json()).toEqual({ error: 'rate_limited', retry_after: 60 });
    expect(await hitsOn(t, 'flow-challenge:ip:127.0.0.1')).toBe(4);
    // The flow is untouched: no failure counted, still open.
    const row = await t.deps.store.findFlow(flow.id);
    expect(row).toMatchObject({ state: 'created', failed_attempts: 0 });

    t.clock.advance(60_000);
    expect((await options(flow.id, flow.csrf_token)).statusCode).toBe(200);
  });

  it('counts before the flow is looked up: unknown flows and wrong CSRF tokens count too', async () => {
    const flow = await startFlow(t);
    expectError(await options(UNKNOWN_FLOW, 'x'), 404, 'not_found');
    expectError(await options(flow.id, 'wrong'), 401, 'invalid_token');
    expectError(await options(UNKNOWN_FLOW, 'x'), 404, 'not_found');
    expectRateLimited(await options(UNKNOWN_FLOW, 'x'));
    expectRateLimited(await options(flow.id, flow.csrf_token));
  });

  it('keys by address: another address, and a proxied end user, have their own budget', async () => {
    const flow = await startFlow(t);
    for (let i = 0; i < 3; i += 1) await options(flow.id, flow.csrf_token);
    expectRateLimited(await options(flow.id, flow.csrf_token));
    const other = await options(flow.id, flow.csrf_token, {}, '192.0.2.40');
    expect(other.statusCode, other.body).toBe(200);

    const as = (address: string) => ({
      authorization: `Bearer ${proxy}`,
      'x-service-client-ip': address,
    });
    for (let i = 0; i < 3; i += 1) {
      expect((await options(flow.id, flow.csrf_token, as('2001:db8:7:7::1'))).statusCode).toBe(200);
    }
    // The same /64: over the limit.
    expectRateLimited(await options(flow.id, flow.csrf_token, as('2001:db8:7:7::2')));
    expect(await hitsOn(t, 'flow-challenge:ip:2001:db8:7:7::/64')).toBe(4);
  });

  it('refusals before the count spend nothing: a foreign Origin, a bad body, a bad proxy header', async () => {
    const flow = await startFlow(t);
    const foreign = await options(flow.id, flow.csrf_token, { origin: 'https://evil.example' });
    expectError(foreign, 403, 'forbidden');
    const badBody = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/passkey/options`,
      headers: { origin: ORIGIN },
      payload: { csrf_token: flow.csrf_token, extra: 1 },
    });
    expectError(badBody, 422, 'validation_error', /unknown field extra/);
    expectError(
      await options(flow.id, flow.csrf_token, { 'x-service-client-ip': '192.0.2.1' }),
      401,
      'missing_service_token',
    );
    expect(await hitsOn(t, 'flow-challenge:ip:127.0.0.1')).toBe(0);
  });

  it('is its own limit: submissions and flow creation keep theirs', async () => {
    const device = new SoftAuthenticator();
    const token = await t.passwordSignIn();
    expect((await t.register(token, device)).statusCode).toBe(201);
    t.clock.advance(60 * 60_000);
    // Spend the challenge budget on other flows, then sign in with a challenge issued before.
    const flow = await startFlow(t);
    const issued = await options(flow.id, flow.csrf_token);
    for (let i = 0; i < 2; i += 1) await options((await startFlow(t)).id, 'x');
    expectRateLimited(await options(flow.id, flow.csrf_token));
    const signedIn = await t.submitPasskey(
      flow,
      device.assert(issued.json().options, { origin: ORIGIN }),
    );
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(await hitsOn(t, 'flow:ip:127.0.0.1')).toBe(1);
  });
});

describe('SERVICE_RATE_LIMIT_CHALLENGE_IP', () => {
  const base = { SERVICE_PASSWORD_PEPPER: 'p' };
  it('defaults to 60 per minute and takes <count>/<window>', () => {
    expect(loadConfig(base).rateLimits.challengeIp).toEqual({ limit: 60, windowMs: 60_000 });
    expect(
      loadConfig({ ...base, SERVICE_RATE_LIMIT_CHALLENGE_IP: '5/10s' }).rateLimits.challengeIp,
    ).toEqual({ limit: 5, windowMs: 10_000 });
  });

  it('refuses anything else, naming the variable', () => {
    const load = () => loadConfig({ ...base, SERVICE_RATE_LIMIT_CHALLENGE_IP: 'lots' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/^SERVICE_RATE_LIMIT_CHALLENGE_IP=/);
  });
});
