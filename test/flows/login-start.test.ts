import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  APP_ORIGIN,
  BROWSER_ACCEPT,
  type FlowTestApp,
  PASSWORD,
  createFlowApp,
  expectError,
  expectValidationError,
  flowRow,
  hitsOn,
  startFlow,
  submit,
} from './helpers.js';

describeEachDatabase('GET /v1/login and GET /v1/flows/{id}', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, { SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s' });
  });
  afterAll(() => t?.close());

  it('creates a flow and answers JSON to an API client', async () => {
    const res = await t.inject({
      method: 'GET',
      url: `/v1/login?return_to=${encodeURIComponent(`${APP_ORIGIN}/after`)}`,
      headers: { accept: 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    const flow = res.json();
    expect(Object.keys(flow).sort()).toEqual(
      ['csrf_token', 'expires_at', 'flow_id', 'id', 'issued_at', 'return_to', 'state'].sort(),
    );
    expect(flow.id).toMatch(/^tess_f_[A-Za-z0-9_-]{43}$/);
    expect(flow.flow_id).toBe(flow.id);
    expect(flow.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(flow.state).toBe('created');
    expect(flow.return_to).toBe(`${APP_ORIGIN}/after`);
    expect(Date.parse(flow.expires_at) - Date.parse(flow.issued_at)).toBe(15 * 60_000);
    expect(flow.issued_at).toBe(new Date(t.clock.now()).toISOString());

    const row = await flowRow(t, flow.id);
    expect(row).toMatchObject({
      state: 'created',
      failed_attempts: 0,
      csrf_token: flow.csrf_token,
    });
  });

  it('treats no Accept, */* and an absent or empty return_to as an API client in inline mode', async () => {
    for (const accept of [undefined, '*/*', 'application/json, text/html;q=0.5']) {
      const res = await t.inject({
        method: 'GET',
        url: '/v1/login?return_to=',
        headers: accept ? { accept } : {},
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().return_to).toBeNull();
    }
  });

  it('canonicalises return_to, so only what was checked is ever redirected to', async () => {
    const flow = await startFlow(t, 'HTTPS://APP.example:443/a/./b/../c?x=1#top');
    expect(flow.return_to).toBe('https://app.example/a/c?x=1#top');
  });

  it('does not create flows on HEAD', async () => {
    const res = await t.inject({ method: 'HEAD', url: '/v1/login' });
    expect(res.statusCode).toBe(404);
  });

  it('refuses a repeated return_to parameter', async () => {
    const res = await t.inject({
      method: 'GET',
      url: `/v1/login?return_to=${APP_ORIGIN}/a&return_to=https://evil.example/`,
    });
    expectValidationError(res);
  });

  it('shows a flow without its CSRF token, with recorded errors newest last', async () => {
    const flow = await startFlow(t);
    const fresh = await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['cache-control']).toBe('no-store');
    expect(fresh.json()).toEqual({
      id: flow.id,
      flow_id: flow.id,
      return_to: null,
      state: 'created',
      issued_at: flow.issued_at,
      expires_at: flow.expires_at,
      errors: [],
    });
    expect(fresh.body).not.toContain(flow.csrf_token);

    await submit(t, flow.id, { username: 'alice', password: 'wrong', csrf_token: flow.csrf_token });
    t.clock.advance(1000);
    await submit(t, flow.id, { username: 'nobody', password: 'x', csrf_token: flow.csrf_token });
    const after = (await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` })).json();
    expect(after.errors).toEqual([
      { error: 'invalid_credentials', at: new Date(t.clock.now() - 1000).toISOString() },
      { error: 'invalid_credentials', at: new Date(t.clock.now()).toISOString() },
    ]);

    await submit(t, flow.id, {
      username: 'alice',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    const done = await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` });
    expect(done.json().state).toBe('completed');
  });

  it('shows an expired flow as expired', async () => {
    const flow = await startFlow(t);
    t.clock.advance(15 * 60_000);
    const res = await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` });
    expect(res.json().state).toBe('expired');
  });

  it('answers 404 for an unknown or malformed flow id', async () => {
    const unknown = `tess_f_${'A'.repeat(43)}`;
    for (const id of [unknown, 'nope', 'tess_s_' + 'A'.repeat(43), '%00']) {
      expectError(await t.inject({ method: 'GET', url: `/v1/flows/${id}` }), 404, 'not_found');
    }
  });
});

describeEachDatabase('return_to allow-list', (kind) => {
  let t: FlowTestApp;
  let prefixed: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, { SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s' });
    prefixed = await createFlowApp(kind, {
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
      SERVICE_RETURN_TO_ALLOWED: 'https://shop.example/after-login, https://docs.example',
    });
  });
  afterAll(async () => {
    await t?.close();
    await prefixed?.close();
  });

  const login = (app: FlowTestApp, returnTo: string) =>
    app.inject({ method: 'GET', url: `/v1/login?return_to=${encodeURIComponent(returnTo)}` });

  it.each([
    `${APP_ORIGIN}/`,
    `${APP_ORIGIN}/deep/path?q=1`,
    // The service's own origin (inject addresses it as localhost:80).
    'http://localhost/account',
    'https://localhost:80/account',
  ])('allows %s by default (CORS origins plus own origin)', async (returnTo) => {
    expect((await login(t, returnTo)).statusCode).toBe(200);
  });

  it.each([
    ['another site', 'https://evil.example/'],
    ['a scheme-relative URL', '//evil.example/'],
    ['a relative path', '/account'],
    ['javascript:', 'javascript:alert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['userinfo naming the allowed host', `https://app.example@evil.example/`],
    ['userinfo on the allowed host', `https://user:pass@app.example/`],
    ['a look-alike suffix', 'https://app.example.evil.example/'],
    ['a backslash trick', 'https://evil.example\\@app.example/'],
    ['a backslash host', 'https:\\\\evil.example'],
    ['another scheme on the same host', 'http://app.example/'],
    ['another port on the same host', 'https://app.example:8443/'],
    ['leading whitespace', ` ${APP_ORIGIN}/`],
    ['an embedded newline', `${APP_ORIGIN}/\nx`],
    ['a tab inside the scheme', `ht\ttps://app.example/`],
    ['an over-long URL', `${APP_ORIGIN}/${'a'.repeat(2100)}`],
    ['not a URL', 'not a url'],
  ])('refuses %s with 422', async (_label, returnTo) => {
    const res = await login(t, returnTo);
    expectValidationError(res);
    expect(res.json().message).toMatch(/return_to/);
  });

  it('matches SERVICE_RETURN_TO_ALLOWED path prefixes by whole segments', async () => {
    for (const ok of [
      'https://shop.example/after-login',
      'https://shop.example/after-login/',
      'https://shop.example/after-login/cart?x=1',
      'https://docs.example/anything',
    ]) {
      expect((await login(prefixed, ok)).statusCode, ok).toBe(200);
    }
    for (const bad of [
      'https://shop.example/after-loginx',
      'https://shop.example/',
      'https://shop.example/after-login/../admin',
      'https://shop.example/after-login/%2e%2e/admin',
      // The configured list replaces the default: neither the CORS origin nor our own.
      `${APP_ORIGIN}/`,
      'http://localhost/',
    ]) {
      expectValidationError(await login(prefixed, bad));
    }
  });

  it('answers a browser with a page, not JSON, when return_to is refused', async () => {
    const res = await t.inject({
      method: 'GET',
      url: `/v1/login?return_to=${encodeURIComponent('https://evil.example/')}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('not allowed');
    expect(res.body).not.toContain('evil.example');
  });
});

describeEachDatabase('flow creation rate limit', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, { SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '3/60s' });
  });
  afterAll(() => t?.close());

  it('counts GET /v1/login per address in the database and answers 429 past the limit', async () => {
    for (let i = 0; i < 3; i += 1) await startFlow(t);
    const refused = await t.inject({ method: 'GET', url: '/v1/login' });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({ error: 'rate_limited', retry_after: 60 });
    expect(refused.headers['retry-after']).toBe('60');
    // inject connects from 127.0.0.1: four hits are stored under that address's key.
    expect(await hitsOn(t, 'flow-create:ip:127.0.0.1')).toBe(5 - 1);

    const page = await t.inject({
      method: 'GET',
      url: '/v1/login',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.statusCode).toBe(429);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toMatch(/Try again in \d+ seconds/);

    t.clock.advance(60_000);
    expect((await t.inject({ method: 'GET', url: '/v1/login' })).statusCode).toBe(200);
  });
});

describe('SERVICE_LOGIN_UI_URL', () => {
  describeEachDatabase('operator login UI', (kind) => {
    let t: FlowTestApp;
    beforeAll(async () => {
      t = await createFlowApp(kind, {
        SERVICE_LOGIN_UI_URL: 'https://login.example/ui?theme=dark',
      });
    });
    afterAll(() => t?.close());

    it('sends a browser to the operator UI with the flow id', async () => {
      const res = await t.inject({
        method: 'GET',
        url: `/v1/login?return_to=${encodeURIComponent(`${APP_ORIGIN}/x`)}`,
        headers: { accept: BROWSER_ACCEPT },
      });
      expect(res.statusCode).toBe(303);
      const location = new URL(res.headers.location as string);
      expect(location.origin + location.pathname).toBe('https://login.example/ui');
      expect(location.searchParams.get('theme')).toBe('dark');
      const id = location.searchParams.get('flow')!;
      expect(id).toMatch(/^tess_f_/);
      expect((await flowRow(t, id)).return_to).toBe(`${APP_ORIGIN}/x`);
    });

    it('still answers JSON to an API client', async () => {
      const flow = await startFlow(t);
      expect(flow.csrf_token).toBeTruthy();
    });
  });
});
