import { generate, generateSecret } from 'otplib';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { totpSecretContext } from '../../src/domain/second-factor/totp.js';
import type { TestApp } from '../helpers/app.js';
import { createTestApp } from '../helpers/app.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { auditEntries, PASSWORD } from '../helpers/core.js';
import { createTestDatabase, describeEachDatabase } from '../helpers/databases.js';
import { cliEnvFor, importFile, jsonLines } from '../helpers/transfer.js';
import { sessionTokenOf, startFlow, submit } from '../flows/helpers.js';
import { accountStatus, secondStep, STEP_MS } from '../second-factor/helpers.js';

/**
 * The import line's `totp` field: an authenticator carried from another system, sealed as
 * enrolment seals it and on at once, so the user signs in with the app they already have.
 * Unsupported parameters and bad secrets are refused per line, before anything is written.
 */

// Each CLI run is a Node process of its own: generous time for a loaded machine.
vi.setConfig({ testTimeout: 180_000 });

describeEachDatabase('tessera identity import: the totp field', (kind) => {
  let box: CliSandbox;
  let t: TestApp;
  let env: Record<string, string>;
  const secret = generateSecret({ length: 20 });
  const other = generateSecret({ length: 32 });

  beforeAll(async () => {
    box = cliSandbox();
    const db = await createTestDatabase(kind);
    t = await createTestApp(kind, {}, db);
    env = cliEnvFor(box, db);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await t?.db.drop();
    box?.remove();
  });

  /** Password, then `second_factor_required`, then the code the app shows now. */
  async function signInWithCode(username: string, key: string) {
    const flow = await startFlow(t);
    const first = await submit(t, flow.id, {
      username,
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(first.statusCode, first.body).toBe(403);
    const view = await t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` });
    expect(view.json()).toMatchObject({ state: 'second_factor_required' });
    const code = await generate({ secret: key, epoch: Math.floor(t.clock.now() / 1000) });
    const done = await secondStep(t, flow, 'totp', code);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().session.aal).toBe('aal2');
    return sessionTokenOf(done);
  }

  it('imports the authenticator sealed and on; the user signs in with a code; a re-run changes nothing', async () => {
    const file = importFile(
      box,
      'totp.jsonl',
      jsonLines([
        {
          username: 'app-user',
          password: PASSWORD,
          totp: { secret, algorithm: 'SHA1', digits: 6, period: 30 },
        },
        // As apps and exports write them too: lowercase, grouped, padded.
        {
          username: 'spaced-user',
          password: PASSWORD,
          totp: {
            secret: `${other
              .toLowerCase()
              .match(/.{1,4}/g)!
              .join(' ')}====`,
          },
        },
        { username: 'no-factor', password: PASSWORD },
      ]),
    );
    const result = await runCli(['identity', 'import', file, '--json'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({
      imported: 3,
      second_factors: { totp: 2 },
    });

    const user = (await t.deps.store.findIdentityByUsername('app-user'))!;
    const factor = (await t.deps.store.findTotpFactor(user.id))!;
    expect(factor.confirmed_at).not.toBeNull();
    expect(factor.last_used_step).toBeNull();
    expect(factor.secret_sealed).not.toContain(secret);
    expect(t.deps.secretBox.open(factor.secret_sealed, totpSecretContext(user.id))).toBe(secret);
    expect(
      await t.deps.store.findTotpFactor(
        (await t.deps.store.findIdentityByUsername('no-factor'))!.id,
      ),
    ).toBeUndefined();

    const imports = (await auditEntries(t)).filter((e) => e.action === 'identity_import');
    expect(imports.map((e) => e.details.second_factors).sort()).toEqual([0, 1, 1]);

    t.clock.advance(STEP_MS);
    const session = await signInWithCode('app-user', secret);
    await signInWithCode('spaced-user', other);
    // No recovery codes until the user makes them on the account page.
    expect(await accountStatus(t, session)).toMatchObject({
      enabled: true,
      methods: ['totp'],
      recovery_codes_left: 0,
    });

    const before = await t.deps.store.findTotpFactor(user.id);
    const again = await runCli(['identity', 'import', file, '--json'], env);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(again.stdout)).toMatchObject({
      imported: 0,
      skipped: 3,
      second_factors: {},
    });
    expect(await t.deps.store.findTotpFactor(user.id)).toEqual(before);
  });

  it('refuses bad secrets and parameters Tessera does not run, line by line, writing nothing', async () => {
    const line = (username: string, totp: unknown) => ({ username, password: PASSWORD, totp });
    const file = importFile(
      box,
      'bad-totp.jsonl',
      jsonLines([
        line('fine-totp', { secret }),
        line('not-base32', { secret: 'JBSWY3DPEHPK3PX1JBSWY3DPEHPK3PXP' }),
        line('short-key', { secret: 'JBSWY3DPEHPK3PXP' }),
        line('sha256', { secret, algorithm: 'SHA256' }),
        line('eight-digits', { secret, digits: 8 }),
        line('minute-codes', { secret, period: 60 }),
        line('typo', { secret, perod: 30 }),
        line('no-secret', {}),
        line('a-string', secret),
      ]),
    );
    const result = await runCli(['identity', 'import', file, '--json'], env);
    expect(result).toMatchObject({ code: 2, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      error: 'validation_error',
      message: '8 bad line(s); nothing was imported',
      bad_line_count: 8,
      bad_lines: [
        { line: 2, message: 'totp: the secret is not base32' },
        { line: 3, message: 'totp: the secret is 80 bits (128 to 512 are supported)' },
        { line: 4, message: 'totp: algorithm SHA256 is not supported (only SHA1)' },
        { line: 5, message: 'totp: 8-digit codes are not supported (only 6)' },
        { line: 6, message: 'totp: a 60-second period is not supported (only 30)' },
        { line: 7, message: 'unknown field totp."perod"' },
        { line: 8, message: 'totp.secret must be a string' },
        { line: 9, message: 'totp must be an object' },
      ],
    });
    expect(await t.deps.store.findIdentityByUsername('fine-totp')).toBeUndefined();
  });
});
