import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import type { Identity, IdentityRecord } from '../../src/domain/identities/identity.js';
import { createArgon2Hasher } from '../../src/adapters/argon2-hasher.js';
import { openStorage } from '../../src/storage/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { auditRow, identityRow, sessionRow, stored } from '../helpers/records.js';

const PASSWORD = 'a long enough password';
const NEW_PASSWORD = 'another long password';

/** A sandbox with its database migrated, and a store on the same file for seeding rows. */
function sandboxWithStore() {
  const state = {} as { box: CliSandbox; store: StoreHandle };
  beforeAll(async () => {
    state.box = cliSandbox();
    state.store = openStorage({
      databaseUrl: state.box.databaseFile,
      timeoutMs: 5000,
      poolSize: 1,
    });
    await state.store.migrate();
  });
  afterAll(async () => {
    await state.store?.close();
    state.box?.remove();
  });
  return state;
}

/** A refusal without --json: the exit status and the one line on stderr. */
async function expectRefused(
  t: { box: CliSandbox },
  args: string[],
  exit: number,
  stderr: RegExp,
  input?: string,
) {
  const result = await runCli(args, t.box.env, input);
  expect(result).toMatchObject({ code: exit, stdout: '' });
  expect(result.stderr).toMatch(stderr);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
}

// Each CLI run is a Node process of its own: generous time for a loaded machine.
describe('tessera identity list', { timeout: 180_000 }, () => {
  const t = sandboxWithStore();
  let rows: IdentityRecord[];

  beforeAll(async () => {
    const at = Date.parse('2026-03-01T00:00:00Z');
    rows = [
      identityRow({ username: 'list-a', created_at: at }),
      identityRow({ username: 'list-b', created_at: at + 1, state: 'disabled' }),
      identityRow({ username: 'list-c', created_at: at + 2 }),
    ];
    for (const row of [rows[1]!, rows[2]!, rows[0]!]) await t.store.insertIdentity(row);
  });

  const names = (identities: Identity[]) => identities.map((identity) => identity.username);

  it('lists newest first, by state, up to --limit', async () => {
    const all = await cliJson<Identity[]>(['identity', 'list'], t.box.env);
    expect(names(all)).toEqual(['list-c', 'list-b', 'list-a']);
    expect(all[0]).toEqual({
      id: rows[2]!.id,
      username: 'list-c',
      display_name: rows[2]!.display_name,
      avatar_url: null,
      email: null,
      email_verified: false,
      state: 'active',
      created_at: '2026-03-01T00:00:00.002Z',
      updated_at: new Date(rows[2]!.updated_at).toISOString(),
    });
    const disabled = await cliJson<Identity[]>(
      ['identity', 'list', '--state', 'disabled'],
      t.box.env,
    );
    expect(names(disabled)).toEqual(['list-b']);
    const newestActive = await cliJson<Identity[]>(
      ['identity', 'list', '--state', 'active', '--limit', '1'],
      t.box.env,
    );
    expect(names(newestActive)).toEqual(['list-c']);
  });

  it('prints one line per identity without --json', async () => {
    const result = await runCli(['identity', 'list', '--limit', '2'], t.box.env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      `${rows[2]!.id}  list-c  active  created 2026-03-01T00:00:00.002Z\n` +
        `${rows[1]!.id}  list-b  disabled  created 2026-03-01T00:00:00.001Z\n`,
    );
  });

  it('refuses a bad --state or --limit as a validation error (exit 2)', async () => {
    await expectRefused(
      t,
      ['identity', 'list', '--state', 'deleted'],
      2,
      /^tessera: validation_error: state must be one of: active, disabled$/m,
    );
    for (const limit of ['0', '10001', '2.5']) {
      await expectRefused(
        t,
        ['identity', 'list', '--limit', limit],
        2,
        /^tessera: validation_error: limit must be an integer from 1 to 10000$/m,
      );
    }
  });
});

describe('tessera identity set-password', { timeout: 180_000 }, () => {
  const t = sandboxWithStore();
  let erin: Identity;

  beforeAll(async () => {
    erin = await cliJson<Identity>(
      ['identity', 'create', '--username', 'erin', '--password-stdin'],
      t.box.env,
      `${PASSWORD}\n`,
    );
  });

  const passwordHash = async () => (await t.store.findIdentityById(erin.id))!.password_hash!;
  async function liveSession() {
    const session = sessionRow(erin.id, { expires_at: Date.now() + 3_600_000 });
    await t.store.insertSession(stored(session));
    return session;
  }
  const revokedAt = async (id: string) => (await t.store.findSessionById(id))!.revoked_at;

  it('sets the password, revokes the sessions by default, and audits the change', async () => {
    const sessions = [await liveSession(), await liveSession()];
    const changed = await cliJson<{ identity: Identity; revoked_sessions: number }>(
      ['identity', 'set-password', 'ERIN', '--password-stdin'],
      t.box.env,
      `${NEW_PASSWORD}\n`,
    );
    expect(changed).toEqual({
      identity: { ...erin, updated_at: expect.any(String) },
      revoked_sessions: 2,
    });
    expect(Date.parse(changed.identity.updated_at)).toBeGreaterThan(Date.parse(erin.updated_at));
    for (const session of sessions) expect(await revokedAt(session.id)).not.toBeNull();

    const hasher = await createArgon2Hasher({
      memoryKib: 19456,
      iterations: 2,
      parallelism: 1,
      pepper: t.box.env.SERVICE_PASSWORD_PEPPER!,
      concurrency: 1,
    });
    const hash = await passwordHash();
    expect(await hasher.verify(hash, NEW_PASSWORD)).toBe(true);
    expect(await hasher.verify(hash, PASSWORD)).toBe(false);

    const audit = await cliJson<AuditEntry[]>(
      ['audit', 'list', '--action', 'identity_set_password'],
      t.box.env,
    );
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'identity_set_password',
        service_name: 'cli',
        target_identity: erin.id,
        outcome: 'ok',
        details: expect.objectContaining({
          credential: 'password',
          revoke_sessions: true,
          revoked_sessions: 2,
        }),
      }),
    ]);
  });

  it('--keep-sessions keeps them (by id, without --json)', async () => {
    const session = await liveSession();
    const result = await runCli(
      ['identity', 'set-password', erin.id, '--password-stdin', '--keep-sessions'],
      t.box.env,
      PASSWORD,
    );
    expect(result).toEqual({
      code: 0,
      stdout: `set the password of erin (${erin.id})\n`,
      stderr: '',
    });
    expect(await revokedAt(session.id)).toBeNull();
  });

  it('refuses a password against the policy, an unknown identity and a missing --password-stdin', async () => {
    const before = await passwordHash();
    const session = await liveSession();
    await expectRefused(
      t,
      ['identity', 'set-password', 'erin', '--password-stdin'],
      2,
      /^tessera: validation_error: password must be between 8 and 256 characters long$/m,
      'short\n',
    );
    await expectRefused(
      t,
      ['identity', 'set-password', 'nobody', '--password-stdin'],
      1,
      /^tessera: not_found$/m,
      PASSWORD,
    );
    await expectRefused(
      t,
      ['identity', 'set-password', 'erin'],
      2,
      /--password-stdin is required/,
      PASSWORD,
    );
    expect(await passwordHash()).toBe(before);
    expect(await revokedAt(session.id)).toBeNull();
  });

  it('commits the hash, the revocation and the audit row together or not at all', async () => {
    const before = await passwordHash();
    const session = await liveSession();
    const db = new BetterSqlite3(t.box.databaseFile);
    // The audit insert fails inside the command's transaction.
    db.exec(`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log
      WHEN NEW.action = 'identity_set_password' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    try {
      const result = await runCli(
        ['identity', 'set-password', 'erin', '--password-stdin', '--json'],
        t.box.env,
        NEW_PASSWORD,
      );
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ error: 'internal_error' });
    } finally {
      db.exec('DROP TRIGGER refuse_audit');
      db.close();
    }
    expect(await passwordHash()).toBe(before);
    expect(await revokedAt(session.id)).toBeNull();
  });
});

describe('tessera audit list filters', { timeout: 180_000 }, () => {
  const t = sandboxWithStore();
  const frank = identityRow({ username: 'frank' });
  const at = (iso: string) => Date.parse(iso);
  const rows = [
    auditRow({
      at: at('2026-01-01T00:00:00Z'),
      action: 'flow_password',
      target_identity: frank.id,
    }),
    auditRow({
      at: at('2026-01-02T12:00:00Z'),
      action: 'identity_read',
      target_identity: frank.id,
    }),
    auditRow({ at: at('2026-01-03T00:00:00Z'), action: 'flow_password', target_identity: null }),
    auditRow({ at: at('2026-01-04T00:00:00Z'), action: 'sweep', target_identity: null }),
  ];

  beforeAll(async () => {
    await t.store.insertIdentity(frank);
    await t.store.insertAuditRecords(rows);
  });

  /** Which seeded rows a listing returned, by index, in its order. */
  async function listed(args: string[]): Promise<number[]> {
    const entries = await cliJson<AuditEntry[]>(['audit', 'list', ...args], t.box.env);
    return entries.map((entry) =>
      rows.findIndex(
        (row) => row.action === entry.action && row.at === Date.parse(entry.timestamp),
      ),
    );
  }

  it('filters by action (repeatable), identity (username or id) and time, newest first', async () => {
    expect(await listed([])).toEqual([3, 2, 1, 0]);
    expect(await listed(['--action', 'flow_password'])).toEqual([2, 0]);
    expect(
      await listed([
        '--action',
        'flow_password',
        '--action',
        'identity_read',
        '--identity',
        'Frank',
      ]),
    ).toEqual([1, 0]);
    expect(
      await listed([
        '--identity',
        frank.id,
        '--since',
        '2026-01-02',
        '--until',
        '2026-01-03T00:00:00Z',
      ]),
    ).toEqual([1]);
    // since is inclusive, until exclusive; a zone offset is honoured.
    expect(await listed(['--since', '2026-01-03T01:00:00+01:00', '--until', '2026-01-04'])).toEqual(
      [2],
    );
    expect(await listed(['--limit', '1'])).toEqual([3]);
    expect(await listed(['--until', '2026-01-02T12:00:00.000Z'])).toEqual([0]);
    const none = await runCli(['audit', 'list', '--action', 'identity_disable'], t.box.env);
    expect(none).toEqual({ code: 0, stdout: 'no audit entries\n', stderr: '' });
  });

  it('refuses bad filter values (exit 2) and an unknown identity (not_found)', async () => {
    const instant = /^tessera: validation_error: since must be an ISO 8601 date/m;
    await expectRefused(t, ['audit', 'list', '--since', 'yesterday'], 2, instant);
    await expectRefused(t, ['audit', 'list', '--since', '2026-02-30'], 2, instant);
    await expectRefused(
      t,
      ['audit', 'list', '--since', '2026-01-03', '--until', '2026-01-02'],
      2,
      /since must be before until/,
    );
    await expectRefused(
      t,
      ['audit', 'list', '--action', 'Flow-Password'],
      2,
      /^tessera: validation_error: action must be/m,
    );
    await expectRefused(t, ['audit', 'list', '--identity', 'nobody'], 1, /^tessera: not_found$/m);
  });
});
