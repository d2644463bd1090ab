import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, useVerificationApp } from '../verification/helpers.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import { auditEntries } from '../helpers/core.js';
import { describeEachDatabase, describeOnPostgres } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import {
  APP_ORIGIN,
  BROWSER_ACCEPT,
  LOOSE_SIGN_IN_LIMITS,
  expectError,
  expectRateLimited,
  expectValidationError,
  flowRow,
  formPost,
  sessionTokenOf,
  startFlow,
} from '../flows/helpers.js';
import { OPEN, STRONG, signUp, signUpForm, startRegistration, uniqueUser } from './helpers.js';

const ORIGIN = 'https://id.example';

describeEachDatabase('registration closed (the default)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { SERVICE_LOGIN_UI_URL: `${APP_ORIGIN}/login` });
  });
  afterAll(() => t?.close());

  it('answers every registration route as an unknown one: 404 not_found, no CORS', async () => {
    const flow = await startFlow(t);
    for (const [method, url, accept] of [
      ['GET', '/v1/registration', 'application/json'],
      ['GET', '/v1/registration', BROWSER_ACCEPT],
      ['POST', `/v1/registration/${flow.id}/password`, 'application/json'],
      ['POST', `/v1/registration/${flow.id}/passkey/options`, 'application/json'],
      ['POST', `/v1/registration/${flow.id}/passkey`, 'application/json'],
    ] as const) {
      const res = await t.inject({
        method,
        url,
        headers: { accept, origin: APP_ORIGIN },
        ...(method === 'POST' ? { payload: { csrf_token: flow.csrf_token } } : {}),
      });
      expectError(res, 404, 'not_found');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
    const preflight = await t.inject({
      method: 'OPTIONS',
      url: '/v1/registration',
      headers: { origin: APP_ORIGIN, 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(404);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('the login page offers no sign-up', async () => {
    const t2 = await createTestApp(kind, {}, t.db);
    try {
      const page = await t2.inject({
        method: 'GET',
        url: '/v1/login',
        headers: { accept: BROWSER_ACCEPT },
      });
      expect(page.body).not.toContain('/v1/registration');
    } finally {
      await t2.close();
    }
  });
});

describeEachDatabase('registration open: password sign-up', (kind) => {
  let t: TestApp;
  let reader: string;
  beforeAll(async () => {
    t = await createTestApp(kind, {
      ...OPEN,
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_FLOW_MAX_ATTEMPTS: '3',
      SERVICE_RETURN_TO_ALLOWED: APP_ORIGIN,
    });
    reader = await t.token('identity_read');
  });
  afterAll(() => t?.close());

  it('starts a flow (JSON) and signs up: identity, session, cookie, audit', async () => {
    const flow = await startRegistration(t, `${APP_ORIGIN}/welcome`);
    expect(flow).toMatchObject({
      state: 'created',
      email: 'optional',
      return_to: `${APP_ORIGIN}/welcome`,
    });
    expect(flow.id).toMatch(/^tess_f_/);
    const username = uniqueUser();
    const res = await signUp(t, flow, { username, display_name: 'New Person' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({
      identity: { username, display_name: 'New Person', email: null, email_verified: false },
      session: { authenticated_via: 'password', aal: 'aal1', identity: { username } },
      return_to: `${APP_ORIGIN}/welcome`,
      verification: null,
    });
    const whoami = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      cookies: { service_session: sessionTokenOf(res) },
    });
    expect(whoami.json()).toMatchObject({ identity: { id: body.identity.id } });
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'completed', kind: 'registration' });

    const rows = (await auditEntries(t)).filter((row) => row.target_identity === body.identity.id);
    expect(rows.map((row) => row.action)).toEqual(['identity_register', 'login']);
    expect(rows[0]).toMatchObject({ service_name: 'browser', outcome: 'ok' });
    expect(rows[1]!.details).toMatchObject({
      session_id: body.session.id,
      sign_in_method: 'password',
    });

    // The flow served once: the same submission again is refused, nothing more is made.
    expectError(await signUp(t, flow, { username: uniqueUser() }), 401, 'invalid_token');
    const lookup = await t.call('GET', `/v1/identities?username=${username}`, reader);
    expect(lookup.statusCode).toBe(200);
  });

  it('the password signs in on a login flow afterwards', async () => {
    const username = uniqueUser();
    expect((await signUp(t, await startRegistration(t), { username })).statusCode).toBe(201);
    const login = await startFlow(t);
    const res = await t.inject({
      method: 'POST',
      url: `/v1/flows/${login.id}/password`,
      payload: { username, password: STRONG, csrf_token: login.csrf_token },
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses a missing or wrong CSRF token, and a login flow, creating nothing', async () => {
    const flow = await startRegistration(t);
    const username = uniqueUser();
    expectError(
      await signUp(t, { id: flow.id, csrf_token: 'wrong' }, { username }),
      401,
      'invalid_token',
    );
    const missing = await t.inject({
      method: 'POST',
      url: `/v1/registration/${flow.id}/password`,
      payload: { username, password: STRONG },
    });
    expectError(missing, 401, 'invalid_token');
    const login = await startFlow(t);
    expectError(await signUp(t, login, { username }), 404, 'not_found');
    // And the other way round: a registration flow signs no one in.
    const asLogin = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/password`,
      payload: { username, password: STRONG, csrf_token: flow.csrf_token },
    });
    expectError(asLogin, 404, 'not_found');
    // Posted as the login page's form, it gets no login form for the registration flow.
    const asLoginForm = await formPost(t, flow.id, {
      username,
      password: STRONG,
      csrf_token: flow.csrf_token,
    });
    expect(asLoginForm.statusCode).toBe(404);
    expect(asLoginForm.body).not.toContain(flow.csrf_token);
    expectError(
      await t.call('GET', `/v1/identities?username=${username}`, reader),
      404,
      'not_found',
    );
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 0 });
  });

  it('an expired flow signs no one up', async () => {
    const flow = await startRegistration(t);
    t.clock.advance(15 * 60_000 + 1);
    const username = uniqueUser();
    expectError(await signUp(t, flow, { username }), 401, 'invalid_token');
    expectError(
      await t.call('GET', `/v1/identities?username=${username}`, reader),
      404,
      'not_found',
    );
  });

  it('refuses a foreign Origin with 403 and leaves the flow as it was', async () => {
    const flow = await startRegistration(t);
    const res = await signUp(
      t,
      flow,
      { username: uniqueUser() },
      { origin: 'https://evil.example' },
    );
    expectError(res, 403, 'forbidden');
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created' });
  });

  it('checks the fields: username rule, password policy, a bad address', async () => {
    const flow = await startRegistration(t);
    expectValidationError(await signUp(t, flow, { username: 'x' }));
    expectValidationError(await signUp(t, flow, { username: uniqueUser(), password: 'short' }));
    expectValidationError(await signUp(t, flow, { username: uniqueUser(), password: undefined }));
    expectValidationError(
      await signUp(t, flow, { username: uniqueUser(), email: 'not-an-address' }),
    );
    expectValidationError(await signUp(t, flow, { username: uniqueUser(), extra: 1 }));
    // Field errors say nothing about anyone: they are no attempt.
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 0 });
  });

  it('username_taken and email_taken are 409, recorded and counted to the flow cap', async () => {
    const taken = uniqueUser();
    const address = `${taken}@example.com`;
    expect(
      (await signUp(t, await startRegistration(t), { username: taken, email: address })).statusCode,
    ).toBe(201);

    const flow = await startRegistration(t);
    expectError(await signUp(t, flow, { username: taken.toUpperCase() }), 409, 'username_taken');
    expectError(
      await signUp(t, flow, { username: uniqueUser(), email: address.toUpperCase() }),
      409,
      'email_taken',
    );
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 2 });
    // The third refusal reaches SERVICE_FLOW_MAX_ATTEMPTS (3): the flow closes.
    expectError(await signUp(t, flow, { username: taken }), 409, 'username_taken');
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'failed', failed_attempts: 3 });
    expectError(await signUp(t, flow, { username: uniqueUser() }), 401, 'invalid_token');
    const errors = await t.deps.store.listFlowErrors(flow.id);
    expect(errors.map((row) => row.error)).toEqual([
      'username_taken',
      'email_taken',
      'username_taken',
    ]);
    // Each refusal is audited with the code it was answered (no webhook: not a creation).
    const refusals = (await auditEntries(t)).filter(
      (row) => row.action === 'identity_register' && row.details.flow_id === flow.id,
    );
    expect(refusals.map((row) => row.outcome)).toEqual([
      'username_taken',
      'email_taken',
      'username_taken',
      'invalid_token',
    ]);
  });

  it('a form post that fails shows the form again with the sentence, the typed values kept', async () => {
    const taken = uniqueUser();
    expect((await signUp(t, await startRegistration(t), { username: taken })).statusCode).toBe(201);
    const page = await t.inject({
      method: 'GET',
      url: '/v1/registration',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.statusCode).toBe(200);
    const id = /action="\/v1\/registration\/(tess_f_[^/]+)\/password"/.exec(page.body)![1]!;
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!;
    const res = await signUpForm(t, id, {
      csrf_token: csrf,
      username: taken,
      display_name: '<b>Me</b>',
      password: STRONG,
    });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('This username is taken');
    expect(res.body).toContain('value="&lt;b&gt;Me&lt;/b&gt;"');
    expect(res.body).not.toContain(STRONG);

    const done = await signUpForm(t, id, {
      csrf_token: csrf,
      username: uniqueUser(),
      password: STRONG,
    });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Signed in');
    expect(sessionTokenOf(done)).toMatch(/^tess_s_/);
  });

  it('the login page links to sign-up, and sign-up back to sign-in, return_to kept', async () => {
    const returnTo = `${APP_ORIGIN}/after`;
    const login = await t.inject({
      method: 'GET',
      url: `/v1/login?return_to=${encodeURIComponent(returnTo)}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(login.body).toContain(
      `href="/v1/registration?return_to=${encodeURIComponent(returnTo)}"`,
    );
    const page = await t.inject({
      method: 'GET',
      url: `/v1/registration?return_to=${encodeURIComponent(returnTo)}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.body).toContain(`href="/v1/login?return_to=${encodeURIComponent(returnTo)}"`);
    const refused = await t.inject({
      method: 'GET',
      url: `/v1/registration?return_to=${encodeURIComponent('https://evil.example/')}`,
    });
    expectValidationError(refused);
  });
});

describeEachDatabase('registration: per-address limits', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, {
      ...OPEN,
      SERVICE_RATE_LIMIT_LOGIN_IP: '2/60s',
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '3/60s',
    });
  });
  afterAll(() => t?.close());

  it('submissions count with the login flows’ per-address limit; flow creation with theirs', async () => {
    const flow = await startRegistration(t);
    expectValidationError(await signUp(t, flow, { username: uniqueUser(), password: 'short' }));
    expect((await signUp(t, flow, { username: uniqueUser() })).statusCode).toBe(201);
    const next = await startRegistration(t);
    expectRateLimited(await signUp(t, next, { username: uniqueUser() }));
    // A login flow was the third creation from this address; the fourth is refused.
    await startFlow(t);
    expectRateLimited(await t.inject({ method: 'GET', url: '/v1/registration' }));
  });
});

describeEachDatabase('registration: passkey sign-up (API)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { ...OPEN, ...LOOSE_SIGN_IN_LIMITS, SERVICE_PUBLIC_URL: ORIGIN });
  });
  afterAll(() => t?.close());

  const post = (flowId: string, path: string, payload: Record<string, unknown>) =>
    t.inject({
      method: 'POST',
      url: `/v1/registration/${flowId}/${path}`,
      headers: { origin: ORIGIN },
      payload,
    });

  it('signs up with no password; the passkey signs in afterwards, the password never', async () => {
    const device = new SoftAuthenticator();
    const username = uniqueUser('pk');
    const flow = await startRegistration(t);
    const fields = { csrf_token: flow.csrf_token, username };
    const options = await post(flow.id, 'passkey/options', fields);
    expect(options.statusCode, options.body).toBe(200);
    expect(options.json().options).toMatchObject({ user: { name: username } });
    const credential = device.register(options.json().options, { origin: ORIGIN });
    const res = await post(flow.id, 'passkey', { ...fields, credential });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      identity: { username },
      session: { authenticated_via: 'passkey', aal: 'aal2' },
    });
    const id = res.json().identity.id as string;
    expect((await t.deps.store.findIdentityById(id))!.password_hash).toBeNull();
    expect(await t.deps.store.listPasskeys(id)).toHaveLength(1);
    const actions = (await auditEntries(t))
      .filter((r) => r.target_identity === id)
      .map((r) => r.action);
    expect(actions).toEqual(['passkey_add', 'identity_register', 'login']);

    // Usernameless sign-in with it, on a login flow.
    const login = await startFlow(t);
    const challenge = await t.inject({
      method: 'POST',
      url: `/v1/flows/${login.id}/passkey/options`,
      headers: { origin: ORIGIN },
      payload: { csrf_token: login.csrf_token },
    });
    const assertion = device.assert(challenge.json().options, { origin: ORIGIN });
    const signedIn = await t.inject({
      method: 'POST',
      url: `/v1/flows/${login.id}/passkey`,
      headers: { origin: ORIGIN },
      payload: { csrf_token: login.csrf_token, credential: assertion },
    });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.json().session.identity.id).toBe(id);
    // No password: any password is wrong.
    const other = await startFlow(t);
    const byPassword = await t.inject({
      method: 'POST',
      url: `/v1/flows/${other.id}/password`,
      payload: { username, password: STRONG, csrf_token: other.csrf_token },
    });
    expectError(byPassword, 401, 'invalid_credentials');
  });

  it('refuses a response for another origin, and one without options first', async () => {
    const device = new SoftAuthenticator();
    const flow = await startRegistration(t);
    const fields = { csrf_token: flow.csrf_token, username: uniqueUser('pk') };
    const none = await post(flow.id, 'passkey', { ...fields, credential: { id: 'x' } });
    expectValidationError(none);
    const options = await post(flow.id, 'passkey/options', fields);
    const foreign = device.register(options.json().options, { origin: 'https://evil.example' });
    expectValidationError(await post(flow.id, 'passkey', { ...fields, credential: foreign }));
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created' });
    expectError(
      await t.call(
        'GET',
        `/v1/identities?username=${fields.username}`,
        await t.token('identity_read'),
      ),
      404,
      'not_found',
    );
  });

  it('a taken username is refused before any passkey is made', async () => {
    const taken = uniqueUser();
    expect((await signUp(t, await startRegistration(t), { username: taken })).statusCode).toBe(201);
    const flow = await startRegistration(t);
    const options = await post(flow.id, 'passkey/options', {
      csrf_token: flow.csrf_token,
      username: taken,
    });
    expectError(options, 409, 'username_taken');
  });
});

/** Racing sign-ups for one name or address: the UNIQUE indexes let exactly one through. */
const RACERS = 6;

async function race(
  apps: TestApp[],
  body: (i: number) => Record<string, unknown>,
): Promise<{ winners: number; codes: string[] }> {
  const flows = await Promise.all(
    Array.from({ length: RACERS }, (_, i) => startRegistration(apps[i % apps.length]!)),
  );
  const answers = await Promise.all(
    flows.map((flow, i) => signUp(apps[i % apps.length]!, flow, body(i))),
  );
  const codes = answers.filter((a) => a.statusCode !== 201).map((a) => a.json().error as string);
  return { winners: answers.filter((a) => a.statusCode === 201).length, codes };
}

describeEachDatabase('registration: concurrent sign-ups', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { ...OPEN, ...LOOSE_SIGN_IN_LIMITS });
  });
  afterAll(() => t?.close());

  it(`${RACERS} sign-ups for one username: one identity, the others username_taken`, async () => {
    const username = uniqueUser('race');
    const { winners, codes } = await race([t], () => ({ username }));
    expect(winners).toBe(1);
    expect(codes).toEqual(Array(RACERS - 1).fill('username_taken'));
  });
});

describeOnPostgres('registration: concurrent sign-ups on two instances sharing PostgreSQL', () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    one = await createTestApp('postgres', { ...OPEN, ...LOOSE_SIGN_IN_LIMITS });
    two = await createTestApp('postgres', { ...OPEN, ...LOOSE_SIGN_IN_LIMITS }, one.db);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  it(`${RACERS} sign-ups for one username, split over the instances: exactly one identity`, async () => {
    const username = uniqueUser('race');
    const { winners, codes } = await race([one, two], (i) => ({
      username,
      email: `${username}${i}@example.com`,
    }));
    expect(winners).toBe(1);
    expect(codes).toEqual(Array(RACERS - 1).fill('username_taken'));
  });

  it(`${RACERS} sign-ups for one address under different names: exactly one identity`, async () => {
    const address = `${uniqueUser('mail')}@example.com`;
    const { winners, codes } = await race([one, two], (i) => ({
      username: uniqueUser(`m${i}`),
      email: address,
    }));
    expect(winners).toBe(1);
    expect(codes).toEqual(Array(RACERS - 1).fill('email_taken'));
    const holders = await one.deps.store.findIdentityByEmail(address);
    expect(holders).toBeDefined();
  });
});

describeEachDatabase('registration: the address and its verification', (kind) => {
  describe('SERVICE_REGISTRATION_EMAIL=required', () => {
    const v = useVerificationApp(kind, { ...OPEN, SERVICE_REGISTRATION_EMAIL: 'required' });

    it('asks for an address, mails its code in the sign-up, and signs in at once', async () => {
      const flow = await startRegistration(v.t);
      expect(flow.email).toBe('required');
      expectValidationError(await signUp(v.t, flow, { username: uniqueUser() }));
      const username = uniqueUser();
      const address = `${username}@example.com`;
      const before = v.smtp.received.length;
      const res = await signUp(
        v.t,
        flow,
        { username, email: address },
        { 'accept-language': 'de' },
      );
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(body).toMatchObject({
        identity: { email: address, email_verified: false },
        session: { identity: { username } },
        verification: { state: 'pending', address, return_to: null },
      });
      const mails = await v.mailsSince(before);
      expect(mails).toHaveLength(1);
      expect(mails[0]!.to).toMatchObject({ text: address });
      const done = await v.submit(
        { id: body.verification.id, csrf: body.verification.csrf_token },
        { code: codeOf(mails[0]!) },
      );
      expect(done.statusCode, done.body).toBe(200);
      expect(await v.emailOf(body.identity.id)).toMatchObject({
        email: address,
        email_verified: true,
      });
    });
  });

  describe('SERVICE_REGISTRATION_EMAIL=verified', () => {
    const v = useVerificationApp(kind, { ...OPEN, SERVICE_REGISTRATION_EMAIL: 'verified' });

    const login = async (username: string) => {
      const flow = await startFlow(v.t);
      return v.t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/password`,
        payload: { username, password: STRONG, csrf_token: flow.csrf_token },
      });
    };

    it('signs up without a session; sign-in is refused until the address is verified', async () => {
      const username = uniqueUser();
      const address = `${username}@example.com`;
      const before = v.smtp.received.length;
      const res = await signUp(v.t, await startRegistration(v.t), { username, email: address });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ session: null, verification: { address } });
      expect(res.cookies.find((c) => c.name === 'service_session')).toBeUndefined();

      const refused = await login(username);
      expectError(refused, 403, 'forbidden', /email address is not confirmed/);
      // A wrong password is still only a wrong password: the refusal tells nothing more.
      const wrong = await startFlow(v.t);
      const bad = await v.t.inject({
        method: 'POST',
        url: `/v1/flows/${wrong.id}/password`,
        payload: { username, password: 'not the password', csrf_token: wrong.csrf_token },
      });
      expectError(bad, 401, 'invalid_credentials');

      const [mail] = await v.mailsSince(before);
      const { verification } = res.json();
      const done = await v.submit(
        { id: verification.id, csrf: verification.csrf_token },
        { code: codeOf(mail!) },
      );
      expect(done.statusCode, done.body).toBe(200);
      expect((await login(username)).statusCode).toBe(200);
    });

    it('an identity without an address (a backend’s) still signs in', async () => {
      const username = uniqueUser('svc');
      const direct = await v.t.call('POST', '/v1/register', await v.t.token('direct_auth'), {
        username,
        password: STRONG,
      });
      expect(direct.statusCode, direct.body).toBe(201);
      expect((await login(username)).statusCode).toBe(200);
    });
  });
});
