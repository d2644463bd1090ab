import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../helpers/app.js';
import { describeEachDatabase, describeOnPostgres } from '../helpers/databases.js';
import {
  LOOSE_SIGN_IN_LIMITS,
  type StartedFlow,
  expectError,
  flowRow,
  startFlow,
} from '../flows/helpers.js';
import { PUBLIC_URL, useVerificationApp } from '../verification/helpers.js';
import { EMAIL_CODE_ON, codeMailed, submitCode, userWithAddress } from './helpers.js';

/** Issue 23 item 6: a mailed sign-in code is single use, whoever races with it. */
const RACERS = 6;
const ENV = { ...EMAIL_CODE_ON, SERVICE_FLOW_MAX_ATTEMPTS: '3' };

async function sessionsOf(t: TestApp, identityId: string): Promise<number> {
  return (await t.deps.store.listLiveSessions(identityId, t.clock.now())).length;
}

describeEachDatabase('racing submissions of one email code', (kind) => {
  const h = useVerificationApp(kind, ENV);

  it(`${RACERS} copies on one flow: one session, no failed attempt`, async () => {
    const { user, address } = await userWithAddress(h);
    const { flow, code } = await codeMailed(h, address);
    const answers = await Promise.all(
      Array.from({ length: RACERS }, () => submitCode(h.t, flow, address, code!)),
    );
    const winners = answers.filter((answer) => answer.statusCode === 200);
    expect(winners, answers.map((a) => a.body).join('\n')).toHaveLength(1);
    for (const loser of answers.filter((answer) => answer.statusCode !== 200)) {
      expectError(loser, 401, 'invalid_token');
    }
    expect(await flowRow(h.t, flow.id)).toMatchObject({ state: 'completed', failed_attempts: 0 });
    expect(await sessionsOf(h.t, user.id)).toBe(1);
  });

  it(`one code on ${RACERS} flows at once: one session; the code is spent`, async () => {
    const { user, address } = await userWithAddress(h);
    const { code } = await codeMailed(h, address);
    const flows: StartedFlow[] = [];
    for (let i = 0; i < RACERS; i += 1) flows.push(await startFlow(h.t));
    const answers = await Promise.all(flows.map((flow) => submitCode(h.t, flow, address, code!)));
    const winners = answers.filter((answer) => answer.statusCode === 200);
    expect(winners, answers.map((a) => a.body).join('\n')).toHaveLength(1);
    for (const loser of answers.filter((answer) => answer.statusCode !== 200)) {
      expectError(loser, 401, 'invalid_credentials');
    }
    expect(await sessionsOf(h.t, user.id)).toBe(1);
  });
});

describeOnPostgres(
  'racing submissions of one email code across two instances on one schema',
  () => {
    const h = useVerificationApp('postgres', ENV);
    let two: TestApp;

    beforeAll(async () => {
      two = await createTestApp(
        'postgres',
        { ...LOOSE_SIGN_IN_LIMITS, SERVICE_PUBLIC_URL: PUBLIC_URL, ...ENV },
        h.t.db,
      );
    });
    afterAll(() => two?.close());

    it(`${RACERS} copies split over the instances, on one flow and on a flow each: one session each time`, async () => {
      const { user, address } = await userWithAddress(h);
      const one = await codeMailed(h, address);
      const onOneFlow = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          submitCode(i % 2 === 0 ? h.t : two, one.flow, address, one.code!),
        ),
      );
      expect(onOneFlow.filter((answer) => answer.statusCode === 200)).toHaveLength(1);
      expect(await sessionsOf(h.t, user.id)).toBe(1);

      const next = await codeMailed(h, address);
      const flows: StartedFlow[] = [];
      for (let i = 0; i < RACERS; i += 1) flows.push(await startFlow(i % 2 === 0 ? h.t : two));
      const onManyFlows = await Promise.all(
        flows.map((flow, i) => submitCode(i % 2 === 0 ? h.t : two, flow, address, next.code!)),
      );
      const winners = onManyFlows.filter((answer) => answer.statusCode === 200);
      expect(winners, onManyFlows.map((a) => a.body).join('\n')).toHaveLength(1);
      for (const loser of onManyFlows.filter((answer) => answer.statusCode !== 200)) {
        expectError(loser, 401, 'invalid_credentials');
      }
      expect(await sessionsOf(h.t, user.id)).toBe(2);
    });
  },
);
