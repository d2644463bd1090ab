import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Identity } from '../../src/domain/identities/identity.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { auditEntries } from '../helpers/core.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/databases.js';
import { cliEnvFor } from '../helpers/transfer.js';

const PASSWORD = 'a long enough password';

// Each CLI run is a Node process of its own: generous time for a loaded machine.
vi.setConfig({ testTimeout: 180_000 });

/**
 * `identity create --email`, `identity set-email` (docs/cli.md). On SQLite only: the CLI
 * calls the same domain services as the API, whose email suites run on both databases
 * (test/core/identity-email*.test.ts), and every CLI run here is a process of its own.
 */
describe('tessera identity email [sqlite]', () => {
  const kind = 'sqlite';
  let box: CliSandbox;
  let t: TestApp;
  let env: Record<string, string>;
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

  it('create --email [--email-verified]; show and list --json carry both fields', async () => {
    const created = await cliJson<Identity>(
      [
        'identity',
        'create',
        '--username',
        'mia',
        '--email',
        'Mia@Example.COM',
        '--email-verified',
        '--password-stdin',
      ],
      env,
      PASSWORD,
    );
    expect(created).toMatchObject({ email: 'mia@example.com', email_verified: true });
    expect(await cliJson(['identity', 'show', 'mia'], env)).toEqual(created);
    const listed = await cliJson<Identity[]>(['identity', 'list'], env);
    expect(listed.find((one) => one.id === created.id)).toEqual(created);
    const plain = await cliJson<Identity>(
      ['identity', 'create', '--username', 'ned', '--password-stdin'],
      env,
      PASSWORD,
    );
    expect(plain).toMatchObject({ email: null, email_verified: false });
    const taken = await runCli(
      [
        'identity',
        'create',
        '--username',
        'other',
        '--email',
        'MIA@example.com',
        '--password-stdin',
      ],
      env,
      PASSWORD,
    );
    expect(taken).toMatchObject({ code: 1, stdout: '', stderr: 'tessera: email_taken\n' });
  });

  it('set-email by username or id: sets, verifies, refuses a taken one, removes', async () => {
    const ned = await cliJson<Identity>(['identity', 'show', 'ned'], env);
    const set = await runCli(['identity', 'set-email', 'ned', 'Ned@Bücher.example'], env);
    expect(set).toMatchObject({
      code: 0,
      stdout: `ned (${ned.id}) now has ned@xn--bcher-kva.example (unverified)\n`,
    });
    const verified = await cliJson<Identity>(
      ['identity', 'set-email', ned.id, 'ned@xn--bcher-kva.example', '--verified'],
      env,
    );
    expect(verified).toMatchObject({ email: 'ned@xn--bcher-kva.example', email_verified: true });

    const taken = await runCli(['identity', 'set-email', 'ned', 'mia@example.com', '--json'], env);
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stdout)).toEqual({
      error: 'email_taken',
      message: 'email address belongs to another identity',
    });
    const bad = await runCli(['identity', 'set-email', 'ned', 'ned@@example.com'], env);
    expect(bad).toMatchObject({
      code: 2,
      stderr: 'tessera: validation_error: email must hold exactly one @ (2 given)\n',
    });
    for (const args of [['ned'], ['ned', 'x@example.com', '--remove']]) {
      const refused = await runCli(['identity', 'set-email', ...args], env);
      expect(refused).toMatchObject({
        code: 2,
        stderr: 'tessera: validation_error: give an address, or --remove (not both)\n',
      });
    }
    const unknown = await runCli(['identity', 'set-email', 'nobody', 'x@example.com'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'tessera: not_found\n' });
    expect(await cliJson<Identity>(['identity', 'show', 'ned'], env)).toEqual(verified);

    const removed = await cliJson<Identity>(['identity', 'set-email', 'ned', '--remove'], env);
    expect(removed).toMatchObject({ email: null, email_verified: false });

    const rows = (await auditEntries(t)).filter((row) => row.action === 'identity_set_email');
    expect(rows.map((row) => [row.service_name, row.target_identity, row.details])).toEqual([
      ['cli', ned.id, expect.objectContaining({ email: 'changed', verified: false })],
      ['cli', ned.id, expect.objectContaining({ email: 'same', verified: true })],
      ['cli', ned.id, expect.objectContaining({ email: 'removed', verified: false })],
    ]);
  });
});
