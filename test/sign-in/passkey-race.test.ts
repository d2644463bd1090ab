import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../helpers/app.js';
import { describeEachDatabase, describeOnPostgres } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import {
  APP_ORIGIN,
  LOOSE_SIGN_IN_LIMITS,
  expectError,
  flowRow,
  startFlow,
} from '../flows/helpers.js';
import { ORIGIN, type PasskeyTestApp, createPasskeyApp } from '../passkeys/helpers.js';

/** Issue 22, item 4, for a first step: racing copies of one right passkey assertion. */
const RACERS = 6;

describeEachDatabase('racing passkey assertions on one flow', (kind) => {
  let t: PasskeyTestApp;
  // alice's one passkey: a second one would need an aal2 session (docs/account.md).
  const device = new SoftAuthenticator();

  beforeAll(async () => {
    // Fewer attempts than racers: losers counted as failures would close the flow.
    t = await createPasskeyApp(kind, { ...LOOSE_SIGN_IN_LIMITS, SERVICE_FLOW_MAX_ATTEMPTS: '3' });
    const registered = await t.register(await t.passwordSignIn(), device);
    expect(registered.statusCode, registered.body).toBe(201);
  });
  afterAll(() => t?.close());

  it(`${RACERS} copies of one assertion: one session, the challenge used once, no failure`, async () => {
    const before = (await t.deps.store.listLiveSessions(t.alice.id, t.clock.now())).length;

    const flow = await startFlow(t);
    const options = await t.flowOptions(flow);
    expect(options.statusCode, options.body).toBe(200);
    const credential = device.assert(options.json().options, { origin: ORIGIN });
    const answers = await Promise.all(
      Array.from({ length: RACERS }, () => t.submitPasskey(flow, credential)),
    );

    const winners = answers.filter((answer) => answer.statusCode === 200);
    expect(winners, answers.map((a) => a.body).join('\n')).toHaveLength(1);
    expect(winners[0]!.json().session).toMatchObject({ authenticated_via: 'passkey' });
    for (const loser of answers.filter((answer) => answer.statusCode !== 200)) {
      expectError(loser, 401, 'invalid_token');
    }
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'completed', failed_attempts: 0 });
    expect(await t.deps.store.listFlowErrors(flow.id)).toEqual([]);
    const after = await t.deps.store.listLiveSessions(t.alice.id, t.clock.now());
    expect(after).toHaveLength(before + 1);
    // The challenge is gone, and the passkey's counter moved once, to the assertion's.
    expect(await t.deps.store.findWebAuthnChallenge(`flow:${flow.id}`, t.clock.now())).toBe(
      undefined,
    );
    const [passkey] = await t.deps.store.listPasskeys(t.alice.id);
    expect(passkey!.sign_count).toBe(device.credentials[0]!.counter);
  });

  it('a wrong assertion still uses the challenge up and counts as a failed attempt', async () => {
    const flow = await startFlow(t);
    const options = await t.flowOptions(flow);
    const wrong = device.assert(options.json().options, { origin: 'https://evil.example' });
    expectError(await t.submitPasskey(flow, wrong), 401, 'invalid_credentials');
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 1 });
    // The right answer to the same challenge comes too late: the challenge served one.
    const right = device.assert(options.json().options, { origin: ORIGIN });
    expectError(await t.submitPasskey(flow, right), 401, 'invalid_credentials');
  });
});

describeOnPostgres('racing passkey assertions across two instances on one schema', () => {
  const ENV = { ...LOOSE_SIGN_IN_LIMITS, SERVICE_FLOW_MAX_ATTEMPTS: '3' };
  let t: PasskeyTestApp;
  let two: TestApp;
  const device = new SoftAuthenticator();

  beforeAll(async () => {
    t = await createPasskeyApp('postgres', ENV);
    // The same settings createPasskeyApp gives the first, on the same schema.
    two = await createTestApp(
      'postgres',
      { SERVICE_SESSION_CORS_ORIGINS: APP_ORIGIN, SERVICE_PUBLIC_URL: ORIGIN, ...ENV },
      t.db,
    );
    const registered = await t.register(await t.passwordSignIn(), device);
    expect(registered.statusCode, registered.body).toBe(201);
  });
  afterAll(async () => {
    await two?.close();
    await t?.close();
  });

  it(`${RACERS} copies of one assertion, split over the instances: exactly one session`, async () => {
    const flow = await startFlow(t);
    const options = await t.flowOptions(flow);
    const credential = device.assert(options.json().options, { origin: ORIGIN });
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        (i % 2 === 0 ? t : two).inject({
          method: 'POST',
          url: `/v1/flows/${flow.id}/passkey`,
          headers: { origin: ORIGIN },
          payload: { csrf_token: flow.csrf_token, credential },
        }),
      ),
    );
    const winners = answers.filter((answer) => answer.statusCode === 200);
    expect(winners, answers.map((a) => a.body).join('\n')).toHaveLength(1);
    for (const loser of answers.filter((answer) => answer.statusCode !== 200)) {
      expectError(loser, 401, 'invalid_token');
    }
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'completed', failed_attempts: 0 });
  });
});
