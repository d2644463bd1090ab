import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import type { Identity } from '../../src/domain/identities/identity.js';
import { type TestApp, createTestApp, testHasher } from '../helpers/app.js';
import { auditEntries, auditSince, expectError, uniqueName } from '../helpers/core.js';
import { runCli } from '../helpers/cli.js';
import { describeEachDatabase, postgresUrl } from '../helpers/databases.js';
import { type GatedHasher, gatedHasher } from '../helpers/gated-hasher.js';
import { FIXTURE_FORMATS } from '../helpers/hash-fixtures.js';
import { LOOSE_SIGN_IN_LIMITS, PASSWORD, flowRow, startFlow, submit } from '../flows/helpers.js';
import { enrolledIdentity, passwordStep, secondStep, totpCode } from '../second-factor/helpers.js';

/** Passes the password policy. */
const NEW_PASSWORD = 'violet kettle drums sideways 42';

/**
 * Issue 22, item 3: a password change wins against sign-ins with the old password that are
 * in flight. The gated hasher holds their verifications (the real argon2 already said yes)
 * until the change has answered, so the change commits between verify and mint every time.
 */
describeEachDatabase('a password change against sign-ins in flight', (kind) => {
  let t: TestApp;
  let gate: GatedHasher;
  let service: string;

  beforeAll(async () => {
    gate = gatedHasher(await testHasher());
    t = await createTestApp(kind, LOOSE_SIGN_IN_LIMITS, undefined, undefined, {
      hasher: gate.hasher,
    });
    service = await t.token('direct_auth');
  });
  afterAll(() => t.close());

  const operator = { service_name: 'race-tests', service_id: null };
  const newUser = (): Promise<Identity> =>
    registerIdentity(t.deps, operator, { username: uniqueName('race'), password: PASSWORD });

  /** Sign-ins with `password` by every password path: two flows, two direct calls. */
  async function signInsOf(user: Identity, password = PASSWORD) {
    const flows = await Promise.all([startFlow(t), startFlow(t)]);
    const credentials = { username: user.username, password };
    return {
      flows,
      requests: () => [
        ...flows.map((flow) => submit(t, flow.id, { ...credentials, csrf_token: flow.csrf_token })),
        t.call('POST', '/v1/authenticate/password', service, credentials),
        t.call('POST', '/v1/authenticate/password', service, credentials),
      ],
    };
  }

  const setPassword = (user: Identity) =>
    t.call('PUT', `/v1/identities/${user.id}/password`, service, { password: NEW_PASSWORD });

  const liveSessions = (user: Identity) => t.deps.store.listLiveSessions(user.id, t.clock.now());

  function expectAllRefused(answers: LightMyRequestResponse[]): void {
    for (const answer of answers) expectError(answer, 401, 'invalid_credentials');
  }

  it('PUT /v1/identities/{id}/password between verify and mint: none mints, each a failed attempt', async () => {
    const user = await newUser();
    const { flows, requests } = await signInsOf(user);
    const before = (await auditEntries(t)).length;
    gate.hold(4);
    const inFlight = Promise.all(requests());
    await gate.held();
    expect((await setPassword(user)).statusCode).toBe(204);
    gate.release();

    expectAllRefused(await inFlight);
    expect(await liveSessions(user)).toEqual([]);
    for (const flow of flows) {
      expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 1 });
    }
    // Audited as failed: the two flows' login rows and the two direct sign-ins' rows.
    const audited = (await auditSince(t, before)).filter(
      (e) => e.action !== 'identity_set_password',
    );
    expect(audited.map((e) => [e.action, e.outcome]).sort()).toEqual([
      ['authenticate_password', 'invalid_credentials'],
      ['authenticate_password', 'invalid_credentials'],
      ['login', 'invalid_credentials'],
      ['login', 'invalid_credentials'],
    ]);

    // The new password signs in; the old one no longer does.
    const fresh = await t.call('POST', '/v1/authenticate/password', service, {
      username: user.username,
      password: NEW_PASSWORD,
    });
    expect(fresh.statusCode, fresh.body).toBe(200);
  });

  it('the account page’s change (POST /v1/account/password): only the changing session stays', async () => {
    const user = await newUser();
    const flow = await startFlow(t);
    const own = await submit(t, flow.id, {
      username: user.username,
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(own.statusCode, own.body).toBe(200);
    const cookie = `service_session=${own.cookies.find((c) => c.name === 'service_session')!.value}`;
    const profile = await t.inject({
      method: 'GET',
      url: '/v1/account/profile',
      headers: { cookie },
    });
    const csrf = profile.json().csrf_token as string;

    const { requests } = await signInsOf(user);
    gate.hold(4);
    const inFlight = Promise.all(requests());
    await gate.held();
    // The page verifies the current password too: the gate let its four through already.
    const changed = await t.inject({
      method: 'POST',
      url: '/v1/account/password',
      headers: { cookie, 'x-csrf-token': csrf },
      payload: { current_password: PASSWORD, new_password: NEW_PASSWORD },
    });
    expect(changed.statusCode, changed.body).toBe(204);
    gate.release();

    expectAllRefused(await inFlight);
    expect((await liveSessions(user)).map((s) => s.id)).toEqual([own.json().session.id]);
  });

  it(
    'the CLI’s identity set-password, from another process: none mints',
    { timeout: 60_000 },
    async () => {
      const user = await newUser();
      const { requests } = await signInsOf(user);
      gate.hold(4);
      const inFlight = Promise.all(requests());
      await gate.held();
      const separator = postgresUrl.includes('?') ? '&' : '?';
      const databaseUrl =
        kind === 'sqlite'
          ? t.db.file!
          : `${postgresUrl}${separator}options=-c%20search_path%3D${t.db.schema!}`;
      const cli = await runCli(
        ['identity', 'set-password', user.username, '--password-stdin'],
        {
          SERVICE_DATABASE_URL: databaseUrl,
          SERVICE_PASSWORD_PEPPER: 'test-pepper',
          SERVICE_ENCRYPTION_KEY: 'test-encryption-key',
          SERVICE_LOG_LEVEL: 'silent',
        },
        `${NEW_PASSWORD}\n`,
      );
      expect(cli.code, cli.stderr).toBe(0);
      gate.release();

      expectAllRefused(await inFlight);
      expect(await liveSessions(user)).toEqual([]);
    },
  );

  it('a rehash in flight (an imported hash) neither mints nor overwrites the newer password', async () => {
    const user = await newUser();
    const imported = `imported:${await FIXTURE_FORMATS.bcrypt_2b!(PASSWORD)}`;
    await t.deps.store.setIdentityPassword(user.id, imported, t.clock.now());
    const { requests } = await signInsOf(user);
    gate.hold(4);
    const inFlight = Promise.all(requests());
    await gate.held();
    expect((await setPassword(user)).statusCode).toBe(204);
    gate.release();

    expectAllRefused(await inFlight);
    expect(await liveSessions(user)).toEqual([]);
    const stored = (await t.deps.store.findIdentityById(user.id))!.password_hash!;
    expect(await t.deps.hasher.verify(stored, NEW_PASSWORD)).toBe(true);
    const rehashes = (await auditEntries(t)).filter(
      (entry) => entry.target_identity === user.id && entry.action === 'password_rehash',
    );
    expect(rehashes).toEqual([]);
  });

  it('a flow waiting for the second factor is closed by the change: the right code mints nothing', async () => {
    const { username, identity, secret } = await enrolledIdentity(t, uniqueName('tf'));
    const { flow, res } = await passwordStep(t, username);
    expect(res.statusCode, res.body).toBe(403);
    expect((await setPassword(identity)).statusCode).toBe(204);

    const code = await totpCode(secret, t.clock.now());
    expectError(await secondStep(t, flow, 'totp', code), 401, 'invalid_token');
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'failed' });
    // The change revoked the enrolment's session; the code added none.
    expect(await liveSessions(identity)).toEqual([]);
  });

  it('a change between the password step’s verification and the flow waiting: it never waits', async () => {
    const { username, identity } = await enrolledIdentity(t, uniqueName('tf'));
    const flow = await startFlow(t);
    gate.hold(1);
    const inFlight = submit(t, flow.id, {
      username,
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    await gate.held();
    expect((await setPassword(identity)).statusCode).toBe(204);
    gate.release();

    expectError(await inFlight, 401, 'invalid_credentials');
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 1 });
  });

  it('unpinned: sign-ins and a change sent together leave no session of the old password live', async () => {
    const user = await newUser();
    const { requests } = await signInsOf(user);
    const change = setPassword(user);
    const answers = await Promise.all([...requests(), ...(await signInsOf(user)).requests()]);
    expect((await change).statusCode).toBe(204);

    for (const answer of answers) {
      if (answer.statusCode !== 200) expectError(answer, 401, 'invalid_credentials');
    }
    // Minted before the change (then revoked by it) or refused: none outlives it.
    expect(await liveSessions(user)).toEqual([]);
  });
});

describe('the gated hasher', () => {
  it('passes verifications through when nothing is held', async () => {
    const gate = gatedHasher(await testHasher());
    const hash = await gate.hasher.hash(PASSWORD);
    expect(await gate.hasher.verify(hash, PASSWORD)).toBe(true);
    expect(gate.hasher.peppers).toEqual((await testHasher()).peppers);
  });
});
