import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import { auditEntries } from '../helpers/core.js';
import {
  type FlowTestApp,
  LOOSE_SIGN_IN_LIMITS,
  createFlowApp,
  expectError,
  expectRateLimited,
  flowRow,
  sessionTokenOf,
} from '../flows/helpers.js';
import {
  STEP_MS,
  cookieOf,
  enrolledIdentity,
  passwordStep,
  secondStep,
  totpCode,
} from './helpers.js';

const MAX_ATTEMPTS = 3;
let counter = 0;
const newName = () => `tf-user-${++counter}`;

/** Issue 13 items 3 and 4: the flow with a second factor, through the JSON API. */
describeEachDatabase('sign-in flow with a second factor', (kind) => {
  let t: FlowTestApp;
  let introspect: string;

  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_FLOW_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_RATE_LIMIT_SECOND_FACTOR: '6/15m',
    });
    introspect = await t.token('introspect');
  });
  afterAll(() => t?.close());
  // Every test on fresh time: no rate-limit window or time step carries over.
  beforeEach(() => t.clock.advance(60 * 60_000));

  const verify = (token: string) => t.call('POST', '/v1/sessions/verify', introspect, { token });

  const enrolled = () => enrolledIdentity(t, newName());

  it('a user without a second factor gets an aal1 session, today’s answer plus aal', async () => {
    const { res } = await passwordStep(t, 'alice');
    expect(res.statusCode).toBe(200);
    expect(res.json().session).toMatchObject({ authenticated_via: 'password', aal: 'aal1' });
    const token = sessionTokenOf(res);
    const whoami = await t.inject({ method: 'GET', url: '/v1/whoami', headers: cookieOf(token) });
    expect(whoami.json()).toMatchObject({ authenticated_via: 'password', aal: 'aal1' });
    expect((await verify(token)).json()).toMatchObject({ aal: 'aal1' });
  });

  it('the password step mints nothing: 403 with a message, and the flow waits for the code', async () => {
    const { username, identity } = await enrolled();
    const { flow, res } = await passwordStep(t, username);
    expect(res.statusCode).toBe(403);
    const body = res.json() as { error: string; message: string };
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe('forbidden');
    expect(body.message).toMatch(/second factor/);
    expect(res.headers['set-cookie']).toBeUndefined();

    const row = await flowRow(t, flow.id);
    expect(row).toMatchObject({
      state: 'second_factor_required',
      identity_id: identity.id,
      first_method: 'password',
      failed_attempts: 0,
    });
    const view = await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` });
    expect(view.statusCode).toBe(200);
    expect(view.json()).toMatchObject({
      state: 'second_factor_required',
      second_factor: { methods: ['totp', 'recovery_code'] },
      errors: [],
    });
    // The password route does not take the flow again.
    const again = await passwordStep(t, username);
    expect(again.res.statusCode).toBe(403);
    expectError(
      await t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/password`,
        payload: { username, password: 'correct horse battery', csrf_token: flow.csrf_token },
      }),
      401,
      'invalid_token',
    );
  });

  it('a code completes the flow with an aal2 password session; whoami and verify say aal2', async () => {
    const { username, identity, secret } = await enrolled();
    const { flow } = await passwordStep(t, username);
    const res = await secondStep(t, flow, 'totp', await totpCode(secret, t.clock.now()));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.session).toMatchObject({
      identity: { id: identity.id },
      authenticated_via: 'password',
      aal: 'aal2',
    });
    const token = sessionTokenOf(res);
    const whoami = await t.inject({ method: 'GET', url: '/v1/whoami', headers: cookieOf(token) });
    expect(whoami.json()).toMatchObject({ authenticated_via: 'password', aal: 'aal2' });
    expect((await verify(token)).json()).toMatchObject({ aal: 'aal2' });
    expect((await flowRow(t, flow.id)).state).toBe('completed');
    expect((await t.deps.store.findSessionById(body.session.id))?.aal).toBe('aal2');
  });

  it('refuses a replayed code (same time step), then takes the next step’s code', async () => {
    const { username, secret } = await enrolled();
    const code = await totpCode(secret, t.clock.now());
    const first = await passwordStep(t, username);
    expect((await secondStep(t, first.flow, 'totp', code)).statusCode).toBe(200);

    const second = await passwordStep(t, username);
    expectError(await secondStep(t, second.flow, 'totp', code), 401, 'invalid_credentials');
    // The same step's code stays spent however it is typed.
    expectError(
      await secondStep(t, second.flow, 'totp', `${code.slice(0, 3)} ${code.slice(3)}`),
      401,
      'invalid_credentials',
    );
    t.clock.advance(STEP_MS);
    const next = await secondStep(t, second.flow, 'totp', await totpCode(secret, t.clock.now()));
    expect(next.statusCode, next.body).toBe(200);
  });

  it('wrong codes are recorded and count to the flow’s attempt cap', async () => {
    const { username, secret } = await enrolled();
    const { flow } = await passwordStep(t, username);
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      expectError(await secondStep(t, flow, 'totp', '000000'), 401, 'invalid_credentials');
    }
    const row = await flowRow(t, flow.id);
    expect({ state: row.state, failed: row.failed_attempts }).toEqual({
      state: 'failed',
      failed: MAX_ATTEMPTS,
    });
    const right = await totpCode(secret, t.clock.now());
    expectError(await secondStep(t, flow, 'totp', right), 401, 'invalid_token');
    const view = (await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` })).json();
    expect(view.state).toBe('failed');
    expect(view.second_factor).toBeUndefined();
    expect(view.errors.map((e: { error: string }) => e.error)).toEqual(
      Array(MAX_ATTEMPTS).fill('invalid_credentials'),
    );
  });

  it('attempts count per identity across flows (SERVICE_RATE_LIMIT_SECOND_FACTOR)', async () => {
    const { username, secret } = await enrolled();
    // 6/15m; the enrolment's confirmation was the first.
    for (let i = 0; i < 5; i++) {
      const { flow } = await passwordStep(t, username);
      expectError(await secondStep(t, flow, 'totp', '000000'), 401, 'invalid_credentials');
    }
    const { flow } = await passwordStep(t, username);
    expectRateLimited(await secondStep(t, flow, 'totp', await totpCode(secret, t.clock.now())));
    // Another identity is not affected.
    const other = await enrolled();
    const theirs = await passwordStep(t, other.username);
    const ok = await secondStep(
      t,
      theirs.flow,
      'totp',
      await totpCode(other.secret, t.clock.now()),
    );
    expect(ok.statusCode).toBe(200);
  });

  it('a recovery code signs in once, not twice', async () => {
    const { username, recoveryCodes } = await enrolled();
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    const code = recoveryCodes[3]!;
    const first = await passwordStep(t, username);
    const ok = await secondStep(t, first.flow, 'recovery_code', code.toUpperCase());
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().session).toMatchObject({ authenticated_via: 'password', aal: 'aal2' });

    const second = await passwordStep(t, username);
    expectError(
      await secondStep(t, second.flow, 'recovery_code', code),
      401,
      'invalid_credentials',
    );
    const other = await secondStep(t, second.flow, 'recovery_code', recoveryCodes[4]!);
    expect(other.statusCode).toBe(200);
  });

  it('checks the flow’s CSRF token and the body before counting anything', async () => {
    const { username, secret } = await enrolled();
    const { flow } = await passwordStep(t, username);
    const code = await totpCode(secret, t.clock.now());
    expectError(
      await t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/totp`,
        payload: { code, csrf_token: 'forged' },
      }),
      401,
      'invalid_token',
    );
    const missing = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/totp`,
      payload: { csrf_token: flow.csrf_token },
    });
    expect(missing.statusCode).toBe(422);
    expect((await flowRow(t, flow.id)).failed_attempts).toBe(0);
    // A created flow (no first factor yet) takes no second factor.
    const fresh = await passwordStep(t, 'alice');
    expect(fresh.res.statusCode).toBe(200);
    const { flow: open } = { flow: (await passwordStep(t, 'alice')).flow };
    expectError(await secondStep(t, open, 'totp', code), 401, 'invalid_token');
  });

  it('audits the waiting step and the completion in the login rows', async () => {
    const { username, identity, secret } = await enrolled();
    const { flow } = await passwordStep(t, username);
    await secondStep(t, flow, 'totp', '000000');
    await secondStep(t, flow, 'totp', await totpCode(secret, t.clock.now()));
    const rows = (await auditEntries(t)).filter(
      (row) => row.action === 'login' && row.details.flow_id === flow.id,
    );
    expect(
      rows.map((row) => [row.outcome, row.target_identity, row.details.second_factor]),
    ).toEqual([
      ['second_factor_required', identity.id, undefined],
      ['invalid_credentials', identity.id, 'totp'],
      ['ok', identity.id, 'totp'],
    ]);
    expect(rows[2]!.details.session_id).toEqual(expect.any(String));
  });
});
