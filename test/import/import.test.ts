import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import { importIdentities } from '../../src/domain/identity-transfer/import-identities.js';
import { IMPORTED_PREFIX } from '../../src/adapters/password-hashes/formats.js';
import { hashTransfer } from '../../src/adapters/password-hashes/transfer.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { auditEntries, createIdentity, expectError, PASSWORD, testActor } from '../helpers/core.js';
import { startFlow, submit } from '../flows/helpers.js';
import { createTestDatabase, describeEachDatabase } from '../helpers/databases.js';
import { FIXTURE_FORMATS } from '../helpers/hash-fixtures.js';
import { cliEnvFor, importFile, jsonLines } from '../helpers/transfer.js';

const passwordOf = (username: string) => `the password of ${username}`;

interface Summary {
  imported: number;
  skipped: number;
  failed: Array<{ line: number; message: string }>;
  passwords: Record<string, number>;
  elapsed_ms: number;
}

// Each CLI run is a Node process of its own: generous time for a loaded machine.
vi.setConfig({ testTimeout: 180_000 });

describeEachDatabase('tessera identity import', (kind) => {
  let box: CliSandbox;
  let t: TestApp;
  let env: Record<string, string>;
  let direct: string;
  /** One user per hash format, named after it. */
  let mixed: Array<{ username: string; format: string }>;
  let mixedFile: string;

  beforeAll(async () => {
    box = cliSandbox();
    const db = await createTestDatabase(kind);
    t = await createTestApp(kind, {}, db);
    env = cliEnvFor(box, db);
    direct = await t.token('direct_auth');
    mixed = Object.keys(FIXTURE_FORMATS).map((format) => ({
      username: format.replaceAll('_', '-'),
      format,
    }));
    const lines: object[] = [];
    for (const { username, format } of mixed) {
      lines.push({
        username,
        display_name: `User ${format}`,
        password_hash: await FIXTURE_FORMATS[format]!(passwordOf(username)),
        links: [{ provider: 'legacy', subject: `id-${username}`, verified: true }],
      });
    }
    lines.push({
      username: 'plain',
      password: passwordOf('plain'),
      avatar_url: 'https://a.example/p.png',
    });
    lines.push({ username: 'no-password', links: [{ provider: 'legacy', subject: 'np' }] });
    lines.push({
      username: 'was-disabled',
      state: 'disabled',
      password: passwordOf('was-disabled'),
    });
    mixedFile = importFile(box, 'mixed.jsonl', jsonLines(lines));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await t?.db.drop();
    box?.remove();
  });

  const authenticate = (username: string, password: string) =>
    t.call('POST', '/v1/authenticate/password', direct, { username, password });
  const stored = async (username: string) =>
    (await t.deps.store.findIdentityByUsername(username))!.password_hash;

  it('imports a file mixing every hash format, with links, and audits each identity', async () => {
    const result = await runCli(['identity', 'import', mixedFile, '--json'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const summary = JSON.parse(result.stdout) as Summary;
    expect(summary).toEqual({
      imported: mixed.length + 3,
      skipped: 0,
      failed: [],
      passwords: {
        argon2id: 2,
        argon2i: 1,
        bcrypt: 4,
        'bcrypt-sha256': 1,
        'pbkdf2-sha1': 2,
        'pbkdf2-sha256': 2,
        'pbkdf2-sha512': 2,
        scrypt: 2,
        plaintext: 2,
        none: 1,
      },
      second_factors: {},
      elapsed_ms: expect.any(Number),
    });
    const bcrypt = (await t.deps.store.findIdentityByUsername('bcrypt-2y'))!;
    expect(bcrypt).toMatchObject({ display_name: 'User bcrypt_2y', state: 'active' });
    expect(bcrypt.password_hash).toMatch(/^imported:\$2y\$04\$/);
    expect(await t.deps.store.listLinks(bcrypt.id)).toEqual([
      expect.objectContaining({
        provider: 'legacy',
        subject: 'id-bcrypt-2y',
        verified_at: expect.any(Number),
      }),
    ]);
    const none = (await t.deps.store.findIdentityByUsername('no-password'))!;
    expect(none.password_hash).toBeNull();
    expect((await t.deps.store.listLinks(none.id))[0]?.verified_at).toBeNull();
    const rows = (await auditEntries(t)).filter((entry) => entry.action === 'identity_import');
    expect(rows).toHaveLength(mixed.length + 3);
    expect(rows.find((row) => row.target_identity === bcrypt.id)).toMatchObject({
      service_name: 'cli',
      details: { password: 'bcrypt', links: 1, os_user: expect.any(String) },
    });
  });

  it('signs each user in with the original password and leaves argon2id with the pepper behind', async () => {
    for (const { username, format } of mixed) {
      const before = await stored(username);
      expect(before?.startsWith(IMPORTED_PREFIX), format).toBe(true);
      // A wrong password changes nothing.
      expectError(
        await authenticate(username, `${passwordOf(username)}?`),
        401,
        'invalid_credentials',
      );
      expect(await stored(username)).toBe(before);

      const res = await authenticate(username, passwordOf(username));
      expect(res.statusCode, format).toBe(200);
      const after = await stored(username);
      expect(after, format).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1,keyid=[A-Za-z0-9+/]{8}\$/);
      // Tessera's own hash now: only the pepper makes it verify.
      expect(await t.deps.hasher.verify(after!, passwordOf(username))).toBe(true);
      expect((await authenticate(username, passwordOf(username))).statusCode).toBe(200);
    }
    for (const username of ['plain']) {
      expect(await stored(username)).toMatch(/^\$argon2id\$/);
      expect((await authenticate(username, passwordOf(username))).statusCode).toBe(200);
    }
    expectError(
      await authenticate('was-disabled', passwordOf('was-disabled')),
      403,
      'identity_disabled',
    );
  });

  it('the login page signs an imported user in too, and rehashes the same way', async () => {
    async function* line() {
      yield JSON.stringify({
        username: 'via-flow',
        password_hash: await FIXTURE_FORMATS.django_scrypt!(passwordOf('via-flow')),
      });
    }
    await importIdentities({ ...t.deps, transfer: hashTransfer }, testActor, line());
    expect(await stored('via-flow')).toMatch(/^imported:scrypt\$/);
    const flow = await startFlow(t);
    const res = await submit(t, flow.id, {
      username: 'via-flow',
      password: passwordOf('via-flow'),
      csrf_token: flow.csrf_token,
    });
    expect(res.statusCode).toBe(200);
    expect(await stored('via-flow')).toMatch(/^\$argon2id\$/);
  });

  it('audits each rehash as a credential change, naming the scheme it replaced', async () => {
    const rehashes = (await auditEntries(t)).filter((entry) => entry.action === 'password_rehash');
    expect(rehashes).toHaveLength(mixed.length + 1);
    const scryptUser = (await t.deps.store.findIdentityByUsername('passlib-scrypt'))!;
    expect(rehashes.find((row: AuditEntry) => row.target_identity === scryptUser.id)).toMatchObject(
      {
        service_name: null,
        outcome: 'ok',
        details: { credential: 'password', from: 'scrypt' },
      },
    );
  });

  it('a re-run skips what exists (by username) and imports only the new lines', async () => {
    const again = await runCli(['identity', 'import', mixedFile], env);
    expect(again).toEqual({
      code: 0,
      stdout: `imported 0 identities, skipped ${mixed.length + 3} that exist\n`,
      stderr: '',
    });
    const more = importFile(
      box,
      'more.jsonl',
      jsonLines([
        {
          username: 'PLAIN',
          password_hash: '$2b$04$abcdefghijklmnopqrstuu5ZTfCqjbiSCmfaVlmE8KjCTlJ4Hr6C6',
        },
        { username: 'newcomer', password: passwordOf('newcomer') },
      ]),
    );
    const result = await runCli(['identity', 'import', more, '--json'], env);
    expect(JSON.parse(result.stdout)).toMatchObject({ imported: 1, skipped: 1, failed: [] });
    // The existing identity is left as it was.
    expect(await stored('plain')).toMatch(/^\$argon2id\$/);
  });

  it('reports bad lines by number and writes nothing at all', async () => {
    const owner = await createIdentity(t);
    await t.deps.store.insertLink({
      provider: 'legacy',
      subject: 'taken',
      identity_id: owner.id,
      verified_at: null,
      linked_at: Date.now(),
    });
    const before = (await t.deps.store.listIdentities({ limit: 10_000 })).length;
    const file = importFile(
      box,
      'bad.jsonl',
      jsonLines([
        { username: 'fine-one', password: PASSWORD },
        '{"username": "broken"',
        '',
        { username: 'fine-two', password_hash: `$2b$15$${'.'.repeat(53)}` },
        { username: 'x' },
        { username: 'fine-three', password: 'short' },
        { username: 'fine-four', passwrod: PASSWORD },
        { username: 'fine-one' },
        { username: 'fine-five', links: [{ provider: 'legacy', subject: 'taken' }] },
        { username: 'fine-six', password_hash: '{SSHA}DnKiYrOFTEkn+VpML/5/mBX+VpPyx0J0rjW88Q==' },
        { username: 'fine-seven', password: PASSWORD },
      ]),
    );
    const result = await runCli(['identity', 'import', file, '--json'], env);
    expect(result).toMatchObject({ code: 2, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({
      error: 'validation_error',
      message: '8 bad line(s); nothing was imported',
      bad_line_count: 8,
      bad_lines: [
        { line: 2, message: 'not a JSON object (each line holds one)' },
        { line: 4, message: 'bcrypt cost 15 is above the import bound of 14' },
        { line: 5, message: expect.stringMatching(/^username must be 3-64 characters/) },
        { line: 6, message: expect.stringMatching(/^password must be between 8 and 256/) },
        { line: 7, message: 'unknown field "passwrod"' },
        { line: 8, message: 'username fine-one is also on line 1' },
        { line: 9, message: 'link "legacy"/"taken" belongs to another identity' },
        { line: 10, message: expect.stringMatching(/^password_hash is in no accepted format/) },
      ],
    });
    expect((await t.deps.store.listIdentities({ limit: 10_000 })).length).toBe(before);
    expect(await t.deps.store.findIdentityByUsername('fine-seven')).toBeUndefined();

    // Without --json: one line per bad line on standard error, nothing on standard output.
    const human = await runCli(['identity', 'import', file], env);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr.split('\n')[0]).toBe(
      'tessera: line 2: not a JSON object (each line holds one)',
    );
    expect(human.stderr).toMatch(
      /tessera: validation_error: 8 bad line\(s\); nothing was imported\n$/,
    );
  });

  it('refuses a file it cannot read, or that is not UTF-8, with nothing written', async () => {
    const missing = await runCli(['identity', 'import', `${box.dir}/nope.jsonl`, '--json'], env);
    expect(missing).toMatchObject({ code: 2, stderr: '' });
    expect(JSON.parse(missing.stdout)).toEqual({
      error: 'validation_error',
      message: `cannot read ${box.dir}/nope.jsonl (ENOENT)`,
    });
    const latin1 = importFile(
      box,
      'latin1.jsonl',
      Buffer.concat([
        Buffer.from('{"username": "utf8-ok"}\r\n{"username": "caf'),
        Buffer.from([0xe9]),
        Buffer.from('"}\r\n'),
      ]),
    );
    const result = await runCli(['identity', 'import', latin1], env);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: 'tessera: validation_error: line 2 is not valid UTF-8\n',
    });
    expect(await t.deps.store.findIdentityByUsername('utf8-ok')).toBeUndefined();
  });
});
