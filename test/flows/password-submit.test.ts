import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  APP_ORIGIN,
  type FlowTestApp,
  LOOSE_SIGN_IN_LIMITS,
  PASSWORD,
  addIdentity,
  createFlowApp,
  expectError,
  expectValidationError,
  flowRow,
  operator,
  sessionTokenOf,
  signIn,
  startFlow,
  submit,
} from './helpers.js';

describeEachDatabase('POST /v1/flows/{id}/password (JSON)', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, LOOSE_SIGN_IN_LIMITS);
  });
  afterAll(() => t?.close());

  it('signs in: 200 with return_to and the session, the cookie per SPEC 4.9, flow completed', async () => {
    const flow = await startFlow(t, `${APP_ORIGIN}/home`);
    const res = await signIn(t, flow);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['return_to', 'session']);
    expect(body.return_to).toBe(`${APP_ORIGIN}/home`);
    expect(body.session).toMatchObject({
      identity: { id: t.alice.id, username: 'alice', state: 'active' },
      authenticated_via: 'password',
      issued_at: new Date(t.clock.now()).toISOString(),
      expires_at: new Date(t.clock.now() + 72 * 3_600_000).toISOString(),
    });
    expect(body).not.toHaveProperty('token');

    const setCookie = res.headers['set-cookie'] as string;
    const token = sessionTokenOf(res);
    expect(token).toMatch(/^tess_s_[A-Za-z0-9_-]{43}$/);
    const attributes = setCookie.split('; ').slice(1).sort();
    expect(attributes).toEqual(
      ['HttpOnly', 'Max-Age=259200', 'Path=/', 'SameSite=Lax', 'Secure'].sort(),
    );

    const introspect = await t.token('introspect');
    const verified = await t.call('POST', '/v1/sessions/verify', introspect, { token });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().id).toBe(body.session.id);
    expect((await flowRow(t, flow.id)).state).toBe('completed');
  });

  it('answers return_to null for an inline flow', async () => {
    const res = await signIn(t, await startFlow(t));
    expect(res.statusCode).toBe(200);
    expect(res.json().return_to).toBeNull();
  });

  it('401 invalid_token: a completed flow cannot be used again, even with correct credentials', async () => {
    const flow = await startFlow(t);
    expect((await signIn(t, flow)).statusCode).toBe(200);
    const again = await signIn(t, flow);
    expectError(again, 401, 'invalid_token');
    expect(again.headers['set-cookie']).toBeUndefined();
  });

  it('401 invalid_credentials: identical for a wrong password, an unknown user and a malformed username', async () => {
    const responses = [];
    for (const username of ['alice', 'nobody-here', 'x', '<script>', 'a'.repeat(500)]) {
      const flow = await startFlow(t);
      const res = await submit(t, flow.id, {
        username,
        password: username === 'alice' ? 'wrong password' : PASSWORD,
        csrf_token: flow.csrf_token,
      });
      expectError(res, 401, 'invalid_credentials');
      responses.push({ headers: Object.keys(res.headers).sort(), body: res.body });
      // Recorded on the flow and counted to its cap; the flow stays open for a retry.
      const row = await flowRow(t, flow.id);
      expect(row).toMatchObject({ state: 'created', failed_attempts: 1 });
      expect(await t.deps.store.listFlowErrors(flow.id)).toEqual([
        { flow_id: flow.id, at: t.clock.now(), error: 'invalid_credentials' },
      ]);
    }
    expect(new Set(responses.map((r) => JSON.stringify(r))).size).toBe(1);
  });

  it('lets a flow be retried after a wrong password', async () => {
    const flow = await startFlow(t);
    await submit(t, flow.id, { username: 'alice', password: 'nope', csrf_token: flow.csrf_token });
    expect((await signIn(t, flow)).statusCode).toBe(200);
  });

  it.each([
    ['missing', {}],
    ['empty', { csrf_token: '' }],
    ['mismatched', { csrf_token: 'A'.repeat(43) }],
    ['of another flow', 'other'],
  ])('401 invalid_token: CSRF %s, and the flow is left untouched', async (_label, csrf) => {
    const flow = await startFlow(t);
    const other = await startFlow(t);
    const csrfField = csrf === 'other' ? { csrf_token: other.csrf_token } : csrf;
    const res = await submit(t, flow.id, { username: 'alice', password: PASSWORD, ...csrfField });
    expectError(res, 401, 'invalid_token');
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 0 });
    expect(await t.deps.store.listFlowErrors(flow.id)).toEqual([]);
    expect((await signIn(t, flow)).statusCode).toBe(200);
  });

  it('checks the flow before the CSRF token: completed wins over a bad token', async () => {
    const flow = await startFlow(t);
    await signIn(t, flow);
    const res = await submit(t, flow.id, { username: 'alice', password: PASSWORD });
    expectError(res, 401, 'invalid_token');
  });

  it('404 not_found for an unknown or malformed flow id', async () => {
    const body = { username: 'alice', password: PASSWORD, csrf_token: 'x' };
    expectError(await submit(t, `tess_f_${'B'.repeat(43)}`, body), 404, 'not_found');
    expectError(await submit(t, 'garbage', body), 404, 'not_found');
  });

  it('401 invalid_token once the flow has expired, even with correct credentials', async () => {
    const flow = await startFlow(t);
    t.clock.advance(15 * 60_000 - 1);
    const early = await startFlow(t);
    expect((await signIn(t, flow)).statusCode).toBe(200);
    t.clock.advance(15 * 60_000);
    expectError(await signIn(t, early), 401, 'invalid_token');
    expect((await flowRow(t, early.id)).state).toBe('created');
  });

  it('422 for missing credentials, wrong field types and unknown fields', async () => {
    const flow = await startFlow(t);
    const csrf = flow.csrf_token;
    expectValidationError(await submit(t, flow.id, { csrf_token: csrf }));
    expectValidationError(await submit(t, flow.id, { username: 'alice', csrf_token: csrf }));
    expectValidationError(await submit(t, flow.id, { username: 5, password: PASSWORD }));
    expectValidationError(
      await submit(t, flow.id, { username: 'alice', password: PASSWORD, csrf_token: csrf, x: 1 }),
    );
    const notJson = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/password`,
      headers: { 'content-type': 'application/json' },
      payload: '{"username":',
    });
    expectValidationError(notJson);
    // None of these touched the flow.
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 0 });
  });

  it('403 identity_disabled only after a correct password; wrong password stays invalid_credentials', async () => {
    const bob = await addIdentity(t, 'bob');
    await setIdentityState(t.deps, operator, bob.id, 'disabled');
    const flow = await startFlow(t);
    const wrong = await submit(t, flow.id, {
      username: 'bob',
      password: 'wrong password',
      csrf_token: flow.csrf_token,
    });
    expectError(wrong, 401, 'invalid_credentials');
    const right = await submit(t, flow.id, {
      username: 'bob',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expectError(right, 403, 'identity_disabled');
    expect(right.headers['set-cookie']).toBeUndefined();
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 2 });
  });

  it('login CSRF: a submission from a foreign Origin is 403 forbidden and the flow is unchanged', async () => {
    const flow = await startFlow(t);
    for (const origin of ['https://evil.example', APP_ORIGIN, 'null']) {
      const res = await signIn(t, flow, { origin });
      expectError(res, 403, 'forbidden');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 0 });
    expect(await t.deps.store.listFlowErrors(flow.id)).toEqual([]);
    // The service's own origin (the hosted page) is accepted.
    expect((await signIn(t, flow, { origin: 'http://localhost' })).statusCode).toBe(200);
  });

  it('race: of 10 concurrent correct submissions exactly one signs in and one session exists', async () => {
    const carol = await addIdentity(t, 'carol');
    const flow = await startFlow(t);
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        submit(t, flow.id, { username: 'carol', password: PASSWORD, csrf_token: flow.csrf_token }),
      ),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, ...Array(9).fill(401)]);
    for (const loser of results.filter((r) => r.statusCode === 401)) {
      expect(loser.json()).toEqual({ error: 'invalid_token' });
      expect(loser.headers['set-cookie']).toBeUndefined();
    }
    const revoke = await t.token('revoke');
    const live = await t.call('POST', `/v1/identities/${carol.id}/revoke-sessions`, revoke);
    expect(live.json()).toEqual({ revoked: 1 });
  });
});

describeEachDatabase('flow cookie settings', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_COOKIE_DOMAIN: 'example.com',
      SERVICE_SESSION_TTL_HOURS: '0.5',
    });
  });
  afterAll(() => t?.close());

  it('adds Domain only when SERVICE_COOKIE_DOMAIN is set, and Max-Age is the session lifetime', async () => {
    const res = await signIn(t, await startFlow(t));
    const attributes = (res.headers['set-cookie'] as string).split('; ').slice(1).sort();
    expect(attributes).toEqual(
      ['Domain=example.com', 'HttpOnly', 'Max-Age=1800', 'Path=/', 'SameSite=Lax', 'Secure'].sort(),
    );
  });
});

describeEachDatabase('flow attempt cap', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_FLOW_MAX_ATTEMPTS: '3',
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '1000/15m',
    });
  });
  afterAll(() => t?.close());

  it('closes the flow after the cap: then even the right password is invalid_token', async () => {
    const flow = await startFlow(t);
    for (let i = 1; i <= 3; i += 1) {
      const res = await submit(t, flow.id, {
        username: 'alice',
        password: `wrong ${i}`,
        csrf_token: flow.csrf_token,
      });
      expectError(res, 401, 'invalid_credentials');
    }
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'failed', failed_attempts: 3 });
    const res = await signIn(t, flow);
    expectError(res, 401, 'invalid_token');
    expect(res.headers['set-cookie']).toBeUndefined();
    const view = (await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` })).json();
    expect(view.state).toBe('failed');
    expect(view.errors).toHaveLength(3);
  });

  it('holds the cap when failures race', async () => {
    const flow = await startFlow(t);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        submit(t, flow.id, { username: 'alice', password: `no ${i}`, csrf_token: flow.csrf_token }),
      ),
    );
    for (const res of results) expect(res.statusCode).toBe(401);
    const row = await flowRow(t, flow.id);
    expect(row.state).toBe('failed');
    expect(row.failed_attempts).toBe(3);
    expect(await t.deps.store.listFlowErrors(flow.id)).toHaveLength(3);
  });
});

describeEachDatabase('own origin from SERVICE_PUBLIC_URL', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, { SERVICE_PUBLIC_URL: 'https://id.example/base' });
  });
  afterAll(() => t?.close());

  it('is the only own origin for return_to and the login-CSRF check', async () => {
    expect((await startFlow(t, 'https://id.example/account')).return_to).toBe(
      'https://id.example/account',
    );
    const byHost = await t.inject({
      method: 'GET',
      url: `/v1/login?return_to=${encodeURIComponent('http://localhost/account')}`,
    });
    expectValidationError(byHost);

    const flow = await startFlow(t);
    expectError(await signIn(t, flow, { origin: 'http://localhost' }), 403, 'forbidden');
    expect((await signIn(t, flow, { origin: 'https://id.example' })).statusCode).toBe(200);
  });
});
