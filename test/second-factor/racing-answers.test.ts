import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../helpers/app.js';
import {
  createTestDatabase,
  describeEachDatabase,
  describeOnPostgres,
} from '../helpers/databases.js';
import type { TestDatabase } from '../helpers/databases.js';
import {
  type FlowTestApp,
  LOOSE_SIGN_IN_LIMITS,
  type StartedFlow,
  createFlowApp,
  expectError,
  flowRow,
  sessionTokenOf,
} from '../flows/helpers.js';
import { accountStatus, enrolledIdentity, passwordStep, secondStep, totpCode } from './helpers.js';

/** Issue 22, item 4: racing right answers mint exactly one session and spend nothing else. */
const RACERS = 6;
/** Below RACERS: had the losers counted as failed attempts, they would have closed the flow. */
const ENV = {
  ...LOOSE_SIGN_IN_LIMITS,
  SERVICE_FLOW_MAX_ATTEMPTS: '3',
  SERVICE_RATE_LIMIT_SECOND_FACTOR: '100/15m',
};
let counter = 0;
const newName = () => `racer-${++counter}`;

/**
 * Exactly one answer is the 200 with a session; every other is 401 `invalid_token`, the
 * answer for a flow that is completed; the flow is completed with no failed attempt.
 */
async function expectOneWinner(
  t: TestApp,
  flow: StartedFlow,
  answers: LightMyRequestResponse[],
): Promise<string> {
  const winners = answers.filter((answer) => answer.statusCode === 200);
  expect(winners, answers.map((a) => a.body).join('\n')).toHaveLength(1);
  for (const loser of answers.filter((answer) => answer.statusCode !== 200)) {
    expectError(loser, 401, 'invalid_token');
  }
  expect(await flowRow(t, flow.id)).toMatchObject({ state: 'completed', failed_attempts: 0 });
  expect(await t.deps.store.listFlowErrors(flow.id)).toEqual([]);
  return sessionTokenOf(winners[0]!);
}

describeEachDatabase('racing right answers to one flow', (kind) => {
  let t: FlowTestApp;

  beforeAll(async () => {
    t = await createFlowApp(kind, ENV);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  const liveSessions = (identityId: string) =>
    t.deps.store.listLiveSessions(identityId, t.clock.now());

  it(`${RACERS} submissions of one recovery code: one session, the code spent once`, async () => {
    const { username, identity, session, recoveryCodes } = await enrolledIdentity(t, newName());
    const { flow, res } = await passwordStep(t, username);
    expect(res.statusCode, res.body).toBe(403);
    const before = (await liveSessions(identity.id)).length;

    const answers = await Promise.all(
      Array.from({ length: RACERS }, () => secondStep(t, flow, 'recovery_code', recoveryCodes[0]!)),
    );

    await expectOneWinner(t, flow, answers);
    expect(await liveSessions(identity.id)).toHaveLength(before + 1);
    expect((await accountStatus(t, session)).recovery_codes_left).toBe(recoveryCodes.length - 1);
  });

  it(`${RACERS} submissions of one TOTP code: one session, the step used once`, async () => {
    const { username, identity, secret } = await enrolledIdentity(t, newName());
    const { flow } = await passwordStep(t, username);
    const before = (await liveSessions(identity.id)).length;
    const code = await totpCode(secret, t.clock.now());

    const answers = await Promise.all(
      Array.from({ length: RACERS }, () => secondStep(t, flow, 'totp', code)),
    );

    await expectOneWinner(t, flow, answers);
    expect(await liveSessions(identity.id)).toHaveLength(before + 1);
    // The step is spent: the same code completes no other flow.
    const { flow: next } = await passwordStep(t, username);
    expectError(await secondStep(t, next, 'totp', code), 401, 'invalid_credentials');
  });
});

describeOnPostgres('racing right answers across two instances on one schema', () => {
  let db: TestDatabase;
  let one: TestApp;
  let two: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    one = await createTestApp('postgres', ENV, db);
    two = await createTestApp('postgres', ENV, db);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await db?.drop();
  });

  it(`${RACERS} submissions of one recovery code, split over both: one session, one code spent`, async () => {
    const { username, identity, session, recoveryCodes } = await enrolledIdentity(one, newName());
    const { flow } = await passwordStep(one, username);
    const before = (await one.deps.store.listLiveSessions(identity.id, one.clock.now())).length;

    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        secondStep(i % 2 === 0 ? one : two, flow, 'recovery_code', recoveryCodes[0]!),
      ),
    );

    await expectOneWinner(one, flow, answers);
    const after = await one.deps.store.listLiveSessions(identity.id, one.clock.now());
    expect(after).toHaveLength(before + 1);
    expect((await accountStatus(one, session)).recovery_codes_left).toBe(recoveryCodes.length - 1);
  });
});
