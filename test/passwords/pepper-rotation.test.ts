import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createArgon2Hasher } from '../../src/adapters/argon2-hasher.js';
import { type App, buildApp } from '../../src/app.js';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import type { PasswordHasher } from '../../src/domain/passwords/password-hasher.js';
import { pepperStatus } from '../../src/domain/passwords/pepper-status.js';
import { pepperId, readPepperId } from '../../src/adapters/password-hashes/peppers.js';
import { hashTransfer, hashTransferFor } from '../../src/adapters/password-hashes/transfer.js';
import { createTestApp, type TestApp, testConfig } from '../helpers/app.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { auditEntries, createIdentity, expectError, PASSWORD } from '../helpers/core.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../helpers/databases.js';
import { cliEnvFor, TEST_PEPPER } from '../helpers/transfer.js';

// CLI runs are Node processes of their own: generous time for a loaded machine.
vi.setConfig({ testTimeout: 120_000 });

const OLD = TEST_PEPPER;
const NEW = 'the new pepper, long and random in real life';

/** Real argon2id (test parameters) with these peppers. */
function hasherWith(pepper: string, previous: string[] = []): Promise<PasswordHasher> {
  return createArgon2Hasher({
    memoryKib: 1024,
    iterations: 1,
    parallelism: 1,
    pepper,
    previousPeppers: previous,
    concurrency: 2,
  });
}

describe('pepper ids', () => {
  it('are 8 characters of standard base64, the same for the same pepper, and do not show it', () => {
    expect(pepperId(OLD)).toMatch(/^[A-Za-z0-9+/]{8}$/);
    expect(pepperId(OLD)).toBe(pepperId(OLD));
    expect(pepperId(NEW)).not.toBe(pepperId(OLD));
  });

  it('sit among the PHC parameters of every new hash; the pepper is nowhere in it', async () => {
    const stored = await (await hasherWith(NEW, [OLD])).hash(PASSWORD);
    expect(stored).toMatch(
      new RegExp(`^\\$argon2id\\$v=19\\$m=1024,t=1,p=1,keyid=${escape(pepperId(NEW))}\\$`),
    );
    expect(stored).not.toContain(NEW);
    expect(readPepperId(stored)).toEqual({
      id: pepperId(NEW),
      phc: stored.replace(`,keyid=${pepperId(NEW)}`, ''),
    });
  });

  it('an untagged hash is read as the oldest pepper: the last previous one, else the current', async () => {
    const untagged = readPepperId(await (await hasherWith(OLD)).hash(PASSWORD)).phc;
    const alone = await hasherWith(OLD);
    expect(alone.pepperOf(untagged)).toEqual({ id: pepperId(OLD), tagged: false, known: true });
    expect(await alone.verify(untagged, PASSWORD)).toBe(true);
    const rotated = await hasherWith(NEW, ['a middle pepper', OLD]);
    expect(rotated.pepperOf(untagged)).toEqual({ id: pepperId(OLD), tagged: false, known: true });
    expect(await rotated.verify(untagged, PASSWORD)).toBe(true);
    expect(rotated.peppers).toEqual({
      current: pepperId(NEW),
      previous: [pepperId('a middle pepper'), pepperId(OLD)],
    });
    // Staged: the new pepper known everywhere before it becomes current; the old one,
    // still current, listed last stays the one untagged hashes are read as.
    const staged = await hasherWith(OLD, [NEW, OLD]);
    expect(staged.peppers).toEqual({ current: pepperId(OLD), previous: [pepperId(NEW)] });
    expect(staged.pepperOf(untagged)).toEqual({ id: pepperId(OLD), tagged: false, known: true });
    expect(await staged.verify(untagged, PASSWORD)).toBe(true);
    expect(readPepperId(await staged.hash(PASSWORD)).id).toBe(pepperId(OLD));
  });

  it('a hash whose pepper is gone verifies no password, the right one included', async () => {
    const stored = await (await hasherWith(OLD)).hash(PASSWORD);
    const without = await hasherWith(NEW);
    expect(without.pepperOf(stored)).toEqual({ id: pepperId(OLD), tagged: true, known: false });
    expect(await without.verify(stored, PASSWORD)).toBe(false);
    expect(await (await hasherWith(NEW, [OLD])).verify(stored, PASSWORD)).toBe(true);
  });

  it('an export names the pepper of an untagged hash; import keeps a tagged one as Tessera’s own', async () => {
    const hasher = await hasherWith(NEW, [OLD]);
    const tagged = await (await hasherWith(OLD)).hash(PASSWORD);
    const untagged = readPepperId(tagged).phc;
    const transfer = hashTransferFor(hasher);
    expect(transfer.portable(untagged)).toEqual({ password_hash: tagged, peppered: true });
    expect(transfer.portable(tagged)).toEqual({ password_hash: tagged, peppered: true });
    expect(hashTransfer.accept(tagged, { peppered: true })).toEqual({
      stored: tagged,
      scheme: 'tessera',
    });
    // Without the peppered mark a keyid means a secret Tessera does not have: refused.
    expect(hashTransfer.accept(tagged, { peppered: false })).toHaveProperty('refused');
  });
});

describeEachDatabase('pepper rotation', (kind) => {
  let db: TestDatabase;
  /** The deployment before the rotation: the test hasher, pepper OLD. */
  let before: TestApp;
  let direct: string;
  let box: CliSandbox;
  const opened: App[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    before = await createTestApp(kind, {}, db);
    direct = await before.token('direct_auth');
    box = cliSandbox();
  }, 60_000);
  afterAll(async () => {
    for (const app of opened) await app.close();
    await before?.close();
    await db?.drop();
    box?.remove();
  });

  /** The same database served with these peppers, as after a restart with new settings. */
  async function deployment(pepper: string, previous: string[] = []): Promise<App> {
    const app = await buildApp(testConfig(db.databaseUrl, {}), {
      store: db.open(),
      clock: before.clock,
      hasher: await hasherWith(pepper, previous),
    });
    opened.push(app);
    return app;
  }

  const signIn = (app: App, username: string, password = PASSWORD) =>
    app.app.inject({
      method: 'POST',
      url: '/v1/authenticate/password',
      headers: { authorization: `Bearer ${direct}` },
      payload: { username, password },
    });
  const storedHash = async (username: string) =>
    (await before.deps.store.findIdentityByUsername(username))!.password_hash!;
  const rehashes = async (identityId: string) =>
    (await auditEntries(before)).filter(
      (row: AuditEntry) => row.action === 'password_rehash' && row.target_identity === identityId,
    );
  const status = async (pepper: string, previous: string[]) => {
    const env: Record<string, string> = { ...cliEnvFor(box, db), SERVICE_PASSWORD_PEPPER: pepper };
    if (previous.length > 0) env.SERVICE_PASSWORD_PEPPERS_PREVIOUS = previous.join(',');
    const json = await runCli(['pepper', 'status', '--json'], env);
    const text = await runCli(['pepper', 'status'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(text.code, text.stderr).toBe(0);
    for (const secret of [pepper, ...previous]) {
      expect(json.stdout).not.toContain(secret);
      expect(text.stdout).not.toContain(secret);
    }
    return { json: JSON.parse(json.stdout), text: text.stdout };
  };

  let moved: string;
  let stays: string;
  let untagged: string;

  it('after a rotation an old-pepper user signs in, and the hash moves to the new pepper, audited', async () => {
    moved = (await createIdentity(before)).username;
    stays = (await createIdentity(before)).username;
    expect(readPepperId(await storedHash(moved)).id).toBe(pepperId(OLD));

    const rotated = await deployment(NEW, [OLD]);
    // A wrong password under the old pepper is refused and changes nothing.
    expectError(await signIn(rotated, moved, `${PASSWORD}!`), 401, 'invalid_credentials');
    expect(readPepperId(await storedHash(moved)).id).toBe(pepperId(OLD));

    expect((await signIn(rotated, moved)).statusCode).toBe(200);
    const after = await storedHash(moved);
    expect(readPepperId(after).id).toBe(pepperId(NEW));
    const id = (await before.deps.store.findIdentityByUsername(moved))!.id;
    const rows = await rehashes(id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.service_name).toBeNull();
    expect(rows[0]!.details).toEqual({
      credential: 'password',
      from: 'tessera',
      from_pepper: pepperId(OLD),
      to_pepper: pepperId(NEW),
    });
    // Current now: the next sign-in keeps the hash.
    expect((await signIn(rotated, moved)).statusCode).toBe(200);
    expect(await storedHash(moved)).toBe(after);
    expect(await rehashes(id)).toHaveLength(1);
  });

  it('an untagged hash (written before ids) counts as the oldest pepper’s and gets the current id on sign-in', async () => {
    untagged = (await createIdentity(before)).username;
    const record = (await before.deps.store.findIdentityByUsername(untagged))!;
    const bare = readPepperId(record.password_hash!).phc;
    await before.deps.store.replacePasswordHash(record.id, record.password_hash!, bare);
    // Before any rotation its pepper is the current one: signing in leaves it as it is.
    expect((await signIn(await deployment(OLD), untagged)).statusCode).toBe(200);
    expect(await storedHash(untagged)).toBe(bare);
    expect(await rehashes(record.id)).toEqual([]);

    const hasher = await hasherWith(NEW, [OLD]);
    const counted = await pepperStatus({ store: before.deps.store, hasher });
    expect(counted.peppers).toEqual([
      { id: pepperId(NEW), role: 'current', hashes: 1, untagged: 0 },
      { id: pepperId(OLD), role: 'previous', hashes: 2, untagged: 1 },
    ]);

    const rotated = await deployment(NEW, [OLD]);
    expect((await signIn(rotated, untagged)).statusCode).toBe(200);
    expect(readPepperId(await storedHash(untagged)).id).toBe(pepperId(NEW));
    const rows = await rehashes(record.id);
    expect(rows.map((row) => row.details)).toEqual([
      { credential: 'password', from: 'tessera', from_pepper: null, to_pepper: pepperId(NEW) },
    ]);
  });

  it('tessera pepper status counts the hashes on each pepper by id, and says when one can go', async () => {
    const { json, text } = await status(NEW, [OLD]);
    expect(json).toEqual({
      current: pepperId(NEW),
      peppers: [
        { id: pepperId(NEW), role: 'current', hashes: 2, untagged: 0 },
        { id: pepperId(OLD), role: 'previous', hashes: 1, untagged: 0 },
      ],
      imported: 0,
      without_password: 0,
    });
    expect(text).toContain(`${pepperId(OLD)}  1 hash(es)  previous: still verifies`);

    // `stays` signs in once: nothing depends on the old pepper any more.
    expect((await signIn(await deployment(NEW, [OLD]), stays)).statusCode).toBe(200);
    const drained = await status(NEW, [OLD]);
    expect(drained.json.peppers[1]).toEqual({
      id: pepperId(OLD),
      role: 'previous',
      hashes: 0,
      untagged: 0,
    });
    expect(drained.text).toContain(
      `${pepperId(OLD)}  0 hash(es)  previous: still verifies; can be dropped`,
    );
  });

  it('a hash whose pepper was dropped fails like a wrong password, and status names it missing', async () => {
    const late = (await createIdentity(before)).username;
    const dropped = await deployment(NEW);
    const right = await signIn(dropped, late);
    const wrong = await signIn(dropped, late, `${PASSWORD}!`);
    expectError(right, 401, 'invalid_credentials');
    expect(right.json()).toEqual(wrong.json());
    expect(readPepperId(await storedHash(late)).id).toBe(pepperId(OLD));

    const { json, text } = await status(NEW, []);
    expect(json.peppers).toEqual([
      { id: pepperId(NEW), role: 'current', hashes: 3, untagged: 0 },
      { id: pepperId(OLD), role: 'missing', hashes: 1, untagged: 0 },
    ]);
    expect(text).toMatch(new RegExp(`${escape(pepperId(OLD))}  1 hash\\(es\\)  MISSING`));
  });
});

function escape(text: string): string {
  return text.replace(/[+/]/g, (char) => `\\${char}`);
}
