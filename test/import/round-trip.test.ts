import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { ExportLine } from '../../src/domain/identity-transfer/export-identities.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { auditEntries } from '../helpers/core.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../helpers/databases.js';
import { FIXTURE_FORMATS } from '../helpers/hash-fixtures.js';
import { cliEnvFor, importFile, jsonLines } from '../helpers/transfer.js';

vi.setConfig({ testTimeout: 180_000 });

const passwordOf = (username: string) => `the password of ${username}`;
const parseLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as ExportLine);

/**
 * `tessera identity export | tessera identity import -` from a SQLite deployment into a
 * fresh database of each kind: the identities arrive with their ids, links and hashes, and
 * every user signs in with the original password there.
 */
describeEachDatabase('export from SQLite, import into a fresh database', (kind) => {
  let box: CliSandbox;
  let source: TestDatabase;
  let sourceEnv: Record<string, string>;
  let target: TestApp;
  let targetEnv: Record<string, string>;
  let exported: string;

  beforeAll(async () => {
    box = cliSandbox();
    source = await createTestDatabase('sqlite');
    sourceEnv = cliEnvFor(box, source);
    const file = importFile(
      box,
      'origin.jsonl',
      jsonLines([
        // Tessera's own hash (from the plaintext) by the time of the export…
        {
          username: 'ada',
          password: passwordOf('ada'),
          display_name: 'Ada L.',
          email: ' Ada.L@Example.COM ',
          email_verified: true,
        },
        // …and one still in its imported form (not signed in since).
        {
          username: 'bob',
          password_hash: await FIXTURE_FORMATS.passlib_pbkdf2_sha512!(passwordOf('bob')),
          // An internationalised domain: exported, and carried, in its punycode form.
          email: 'Bob@Bücher.example',
          links: [
            { provider: 'github', subject: '42', verified: true },
            { provider: 'google', subject: 'b@example.com' },
          ],
        },
        { username: 'cyd', state: 'disabled', password: passwordOf('cyd') },
        { username: 'dee', avatar_url: 'https://example.com/dee.png' },
      ]),
    );
    expect((await runCli(['identity', 'import', file], sourceEnv)).code).toBe(0);
    const result = await runCli(['identity', 'export', '--include-password-hashes'], sourceEnv);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    exported = result.stdout;

    const db = await createTestDatabase(kind);
    target = await createTestApp(kind, {}, db);
    targetEnv = cliEnvFor(box, db);
  }, 180_000);
  afterAll(async () => {
    await target?.close();
    await target?.db.drop();
    await source?.drop();
    box?.remove();
  });

  it('exports the import format, with the pepper marker on Tessera hashes only', () => {
    const lines = parseLines(exported);
    expect(lines.map((line) => line.username)).toEqual(['ada', 'bob', 'cyd', 'dee']);
    const [ada, bob, cyd, dee] = lines as [ExportLine, ExportLine, ExportLine, ExportLine];
    expect(ada).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: 'ada',
      display_name: 'Ada L.',
      avatar_url: null,
      email: 'ada.l@example.com',
      email_verified: true,
      state: 'active',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      links: [],
      password_hash: expect.stringMatching(/^\$argon2id\$/),
      password_hash_peppered: true,
    });
    expect(bob.password_hash).toMatch(/^\$pbkdf2-sha512\$1000\$/);
    expect(bob).not.toHaveProperty('password_hash_peppered');
    expect(bob).toMatchObject({ email: 'bob@xn--bcher-kva.example', email_verified: false });
    expect(cyd).toMatchObject({ email: null, email_verified: false });
    expect(bob.links).toEqual([
      { provider: 'github', subject: '42', verified: true },
      { provider: 'google', subject: 'b@example.com', verified: false },
    ]);
    expect(cyd.state).toBe('disabled');
    expect(dee).not.toHaveProperty('password_hash');
    expect(exported).not.toContain('imported:');
  });

  it('imports from standard input and signs everyone in with the original password', async () => {
    const result = await runCli(['identity', 'import', '-', '--json'], targetEnv, exported);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({
      imported: 4,
      passwords: { tessera: 2, 'pbkdf2-sha512': 1, none: 1 },
    });
    const direct = await target.token('direct_auth');
    const signIn = (username: string) =>
      target.call('POST', '/v1/authenticate/password', direct, {
        username,
        password: passwordOf(username),
      });
    expect((await signIn('ada')).statusCode).toBe(200);
    expect((await signIn('bob')).statusCode).toBe(200);
    expect((await signIn('cyd')).json()).toEqual({ error: 'identity_disabled' });
    expect((await signIn('dee')).json()).toEqual({ error: 'invalid_credentials' });
    const read = await target.token('identity_read');
    const ada = await target.call('GET', '/v1/identities?email=ADA.L@example.com', read);
    expect(ada.json()).toMatchObject({ username: 'ada', email_verified: true });
    // bob's imported hash became Tessera's own on the target; ada's was already.
    const rehashed = (await auditEntries(target)).filter((row) => row.action === 'password_rehash');
    expect(rehashed).toEqual([
      expect.objectContaining({ details: { credential: 'password', from: 'pbkdf2-sha512' } }),
    ]);
  });

  it('the target exports what the source did: ids, times, links, states (hashes aside)', async () => {
    const again = await runCli(['identity', 'export'], targetEnv);
    const before = parseLines(exported).map((line) => {
      const copy: Partial<ExportLine> = { ...line };
      delete copy.password_hash;
      delete copy.password_hash_peppered;
      return copy;
    });
    expect(parseLines(again.stdout)).toEqual(before);
  });

  it('without --include-password-hashes no hash leaves, and --state filters', async () => {
    const plain = await runCli(['identity', 'export', '--state', 'disabled'], sourceEnv);
    expect(parseLines(plain.stdout)).toEqual([expect.objectContaining({ username: 'cyd' })]);
    expect(plain.stdout).not.toContain('password_hash');
    const bad = await runCli(['identity', 'export', '--state', 'gone'], sourceEnv);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toBe('tessera: validation_error: state must be one of: active, disabled\n');
  });

  it('every export is audited before its first line, saying whether hashes left', async () => {
    const t = await createTestApp('sqlite', {}, source);
    try {
      const rows = (await auditEntries(t)).filter((row) => row.action === 'identity_export');
      expect(rows.map((row) => row.details)).toEqual([
        expect.objectContaining({ include_password_hashes: true, state: null }),
        expect.objectContaining({ include_password_hashes: false, state: 'disabled' }),
      ]);
    } finally {
      await t.close();
    }
  });
});
