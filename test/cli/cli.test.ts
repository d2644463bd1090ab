import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import type { Identity } from '../../src/domain/identities/identity.js';
import { createArgon2Hasher } from '../../src/adapters/argon2-hasher.js';
import type { ServiceTokenView } from '../../src/domain/service-tokens/service-token.js';
import { migrations } from '../../src/storage/migrations.js';
import { openStorage } from '../../src/storage/open.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { identityRow, sessionRow, stored } from '../helpers/records.js';

const PASSWORD = 'a long enough password';

function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** Every byte SQLite wrote for the database: the file and its WAL. */
function databaseBytes(file: string): string {
  return [file, `${file}-wal`]
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path).toString('latin1'))
    .join('');
}

describe('tessera CLI on SQLite', () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  it('migrate applies the migrations on a fresh database, then has nothing to do', async () => {
    const first = await runCli(['migrate'], box.env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toBe(`applied ${migrations.map((m) => m.id).join(', ')}\n`);
    const second = await runCli(['migrate'], box.env);
    expect(second).toEqual({ code: 0, stdout: 'database is up to date\n', stderr: '' });
  });

  describe('svc', () => {
    let created: ServiceTokenView & { token: string };

    it('create --json prints one document with the token; only its SHA-256 is stored', async () => {
      created = await cliJson(
        ['svc', 'create', '--name', 'billing', '--grant', 'introspect', '--grant', 'identity_read'],
        box.env,
      );
      expect(created).toEqual({
        id: expect.any(String),
        name: 'billing',
        grants: ['introspect', 'identity_read'],
        created_at: expect.any(String),
        revoked_at: null,
        token_format: 'crc32',
        token: expect.stringMatching(/^tess_svc_[A-Za-z0-9_-]{43}$/),
      });
      const db = new BetterSqlite3(box.databaseFile, { readonly: true });
      const row = db.prepare('SELECT * FROM service_tokens WHERE id = ?').get(created.id);
      db.close();
      const sha = createHash('sha256').update(created.token).digest('base64url');
      expect(row).toMatchObject({ name: 'billing', token_hash: sha });
      expect(databaseBytes(box.databaseFile)).not.toContain(created.token.slice(9));
    });

    it('create without --json prints the token exactly once', async () => {
      const result = await runCli(
        ['svc', 'create', '--name', 'mailer', '--grant', 'revoke'],
        box.env,
      );
      expect(result.code).toBe(0);
      const tokens = result.stdout.match(/tess_svc_[A-Za-z0-9_-]{43}/g);
      expect(tokens).toHaveLength(1);
      expect(result.stdout).toMatch(/shown once/);
    });

    it('list --json shows every service without any token material', async () => {
      const listed = await cliJson<ServiceTokenView[]>(['svc', 'list'], box.env);
      expect(listed.map((service) => service.name)).toEqual(['billing', 'mailer']);
      expect(listed[0]).toEqual({
        id: created.id,
        name: 'billing',
        grants: ['introspect', 'identity_read'],
        created_at: created.created_at,
        revoked_at: null,
        token_format: 'crc32',
      });
    });

    it('refuses an unknown grant and a duplicate name, creating nothing', async () => {
      const unknown = await runCli(
        ['svc', 'create', '--name', 'x', '--grant', 'superuser'],
        box.env,
      );
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
      expect(unknown.stderr).toMatch(/^tessera: validation_error: grants must be one or more of/);
      const duplicate = await runCli(
        ['svc', 'create', '--name', 'billing', '--grant', 'revoke'],
        box.env,
      );
      expect(duplicate.code).not.toBe(0);
      expect(duplicate.stderr).toMatch(/billing/);
      const none = await runCli(['svc', 'create', '--name', 'y'], box.env);
      expect(none.code).not.toBe(0);
      const listed = await cliJson<ServiceTokenView[]>(['svc', 'list'], box.env);
      expect(listed).toHaveLength(2);
    });

    it('revoke by name or id marks it revoked; an unknown one exits non-zero', async () => {
      const revoked = await cliJson<ServiceTokenView>(['svc', 'revoke', 'billing'], box.env);
      expect(revoked).toMatchObject({ id: created.id, revoked_at: expect.any(String) });
      const again = await cliJson<ServiceTokenView>(['svc', 'revoke', created.id], box.env);
      expect(again.revoked_at).toBe(revoked.revoked_at);
      const unknown = await runCli(['svc', 'revoke', 'nobody'], box.env);
      expect(unknown).toMatchObject({ code: 1, stderr: 'tessera: not_found\n' });
    });
  });

  describe('identity', () => {
    let alice: Identity;

    it('create --password-stdin stores an argon2id hash of the password with the pepper', async () => {
      alice = await cliJson<Identity>(
        [
          'identity',
          'create',
          '--username',
          'Alice',
          '--display-name',
          'Alice A.',
          '--password-stdin',
        ],
        box.env,
        `${PASSWORD}\n`,
      );
      expect(alice).toMatchObject({ username: 'alice', display_name: 'Alice A.', state: 'active' });
      const db = new BetterSqlite3(box.databaseFile, { readonly: true });
      const { password_hash: hash } = db
        .prepare('SELECT password_hash FROM identities WHERE id = ?')
        .get(alice.id) as { password_hash: string };
      db.close();
      expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1,keyid=[A-Za-z0-9+/]{8}\$/);
      const hasher = await createArgon2Hasher({
        memoryKib: 19456,
        iterations: 2,
        parallelism: 1,
        pepper: box.env.SERVICE_PASSWORD_PEPPER!,
        concurrency: 1,
      });
      expect(await hasher.verify(hash, PASSWORD)).toBe(true);
      expect(await hasher.verify(hash, `${PASSWORD}\n`)).toBe(false);
    });

    it('create refuses a missing --password-stdin, a short password and a taken name', async () => {
      const args = ['identity', 'create', '--username', 'bob'];
      const noStdin = await runCli(args, box.env, PASSWORD);
      expect(noStdin.code).not.toBe(0);
      expect(noStdin.stderr).toMatch(/--password-stdin/);
      const short = await runCli([...args, '--password-stdin'], box.env, 'short\n');
      expect(short.code).not.toBe(0);
      expect(short.stderr).toBe(
        'tessera: validation_error: password must be between 8 and 256 characters long\n',
      );
      const taken = await runCli(
        ['identity', 'create', '--username', 'ALICE', '--password-stdin'],
        box.env,
        PASSWORD,
      );
      expect(taken).toMatchObject({ code: 1, stderr: 'tessera: username_taken\n' });
    });

    it('show finds by username or id; an unknown one exits non-zero', async () => {
      expect(await cliJson(['identity', 'show', 'ALICE'], box.env)).toEqual(alice);
      expect(await cliJson(['identity', 'show', alice.id], box.env)).toEqual(alice);
      const text = await runCli(['identity', 'show', 'alice'], box.env);
      expect(text.stdout).toContain(`id: ${alice.id}`);
      const unknown = await runCli(['identity', 'show', 'nobody'], box.env);
      expect(unknown).toMatchObject({ code: 1, stderr: 'tessera: not_found\n' });
    });

    it('disable keeps sessions, enable restores, disable --revoke-sessions revokes them', async () => {
      const store = openStorage({ databaseUrl: box.databaseFile, timeoutMs: 5000, poolSize: 1 });
      const session = sessionRow(alice.id, { expires_at: Date.now() + 3_600_000 });
      await store.insertSession(stored(session));
      try {
        const disabled = await cliJson<{ identity: Identity; revoked_sessions: number }>(
          ['identity', 'disable', 'alice'],
          box.env,
        );
        expect(disabled).toMatchObject({ identity: { state: 'disabled' }, revoked_sessions: 0 });
        expect((await store.findSessionById(session.id))?.revoked_at).toBeNull();
        const enabled = await cliJson<{ identity: Identity }>(
          ['identity', 'enable', alice.id],
          box.env,
        );
        expect(enabled.identity.state).toBe('active');
        const revoking = await runCli(
          ['identity', 'disable', 'alice', '--revoke-sessions'],
          box.env,
        );
        expect(revoking.code).toBe(0);
        expect(revoking.stdout).toContain('revoked 1 session(s)');
        expect((await store.findSessionById(session.id))?.revoked_at).not.toBeNull();
        expect((await store.findIdentityById(alice.id))?.state).toBe('disabled');
      } finally {
        await store.close();
      }
    });
  });

  it('sweep deletes expired sessions and reports counts', async () => {
    const store = openStorage({ databaseUrl: box.databaseFile, timeoutMs: 5000, poolSize: 1 });
    const identity = identityRow();
    await store.insertIdentity(identity);
    const expired = sessionRow(identity.id, { expires_at: Date.now() - 1000 });
    const live = sessionRow(identity.id, { expires_at: Date.now() + 3_600_000 });
    await store.insertSession(stored(expired));
    await store.insertSession(stored(live));
    await store.close();
    const removed = await cliJson(['sweep'], box.env);
    expect(removed).toEqual({
      sessions: 1,
      flows: 0,
      rate_limits: 0,
      webauthn_challenges: 0,
      mail_codes: 0,
      provider_authorizations: 0,
      recovery_flows: 0,
    });
    const text = await runCli(['sweep'], box.env);
    expect(text.stdout).toBe('removed 0 session(s), 0 flow(s), 0 rate-limit counter(s)\n');
  });

  it('audit list --json records CLI actions as service cli with the OS user', async () => {
    const entries = await cliJson<AuditEntry[]>(['audit', 'list', '--limit', '100'], box.env);
    const actions = entries.map((entry) => entry.action);
    for (const action of [
      'svc_create',
      'svc_revoke',
      'identity_register',
      'identity_disable',
      'identity_enable',
      'sweep',
    ]) {
      expect(actions).toContain(action);
    }
    for (const entry of entries) {
      expect(entry).toMatchObject({ service_name: 'cli', service_id: null, outcome: 'ok' });
      expect(entry.details.os_user).toBe(osUser());
    }
    // Newest first.
    const times = entries.map((entry) => Date.parse(entry.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(await cliJson<AuditEntry[]>(['audit', 'list', '--limit', '2'], box.env)).toHaveLength(2);
    const bad = await runCli(['audit', 'list', '--limit', '0'], box.env);
    expect(bad.code).not.toBe(0);
  });
});
