import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/domain/store.js';
import { UniqueViolation } from '../../src/storage/errors.js';
import { migrations } from '../../src/storage/migrations.js';
import type { StoreHandle } from '../../src/storage/store.js';
import {
  createMigratedStore,
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../helpers/databases.js';
import { auditRow, identityRow, serviceTokenRow, sessionRow, stored } from '../helpers/records.js';

const run = promisify(execFile);
const ALL = migrations.map((migration) => migration.id);

describeEachDatabase('store transactions', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  /** Writes one row of each core kind through `tx`; returns how to find them again. */
  async function writeAll(tx: Store) {
    const identity = identityRow();
    const session = sessionRow(identity.id);
    const service = serviceTokenRow();
    const audit = auditRow({ target_identity: identity.id });
    await tx.insertIdentity(identity);
    await tx.insertSession(stored(session));
    await tx.insertServiceToken(service);
    await tx.insertAuditRecords([audit]);
    await tx.hitRateLimit(`tx:${identity.id}`, 60_000, 0);
    return { identity, session, service, audit };
  }

  async function present(rows: Awaited<ReturnType<typeof writeAll>>) {
    const audit = await store.listAuditRecords(10_000);
    return {
      identity: (await store.findIdentityById(rows.identity.id)) !== undefined,
      session: (await store.findSessionById(rows.session.id)) !== undefined,
      service: (await store.findServiceTokenByHash(rows.service.token_hash)) !== undefined,
      audit: audit.some((row) => row.id === rows.audit.id),
      counter: (await store.hitRateLimit(`tx:${rows.identity.id}`, 60_000, 0)).count > 1,
    };
  }
  const everything = { identity: true, session: true, service: true, audit: true, counter: true };
  const nothing = { identity: false, session: false, service: false, audit: false, counter: false };

  it('commits every write and returns the work result', async () => {
    const rows = await store.transaction(writeAll);
    expect(await present(rows)).toEqual(everything);
  });

  it('rolls back every write when the work throws, rethrowing the same error', async () => {
    const failure = new Error('boom');
    let rows: Awaited<ReturnType<typeof writeAll>> | undefined;
    const caught = await store
      .transaction(async (tx) => {
        rows = await writeAll(tx);
        throw failure;
      })
      .catch((error: unknown) => error);
    expect(caught).toBe(failure);
    expect(await present(rows!)).toEqual(nothing);
  });

  it('rolls back earlier writes when a later statement violates a constraint', async () => {
    const taken = identityRow();
    await store.insertIdentity(taken);
    let rows: Awaited<ReturnType<typeof writeAll>> | undefined;
    const caught = await store
      .transaction(async (tx) => {
        rows = await writeAll(tx);
        await tx.insertIdentity(identityRow({ username: taken.username }));
      })
      .catch((error: unknown) => error);
    expect(caught).toBeInstanceOf(UniqueViolation);
    expect(await present(rows!)).toEqual(nothing);
    // The store is usable afterwards.
    expect((await store.findIdentityById(taken.id))?.id).toBe(taken.id);
  });

  it('a nested transaction joins the open one: it sees its writes and shares its fate', async () => {
    let inner: Awaited<ReturnType<typeof writeAll>> | undefined;
    const outer = identityRow();
    await store
      .transaction(async (tx) => {
        await tx.insertIdentity(outer);
        inner = await tx.transaction(async (nested) => {
          expect((await nested.findIdentityById(outer.id))?.id).toBe(outer.id);
          return writeAll(nested);
        });
        throw new Error('outer fails after the nested one finished');
      })
      .catch(() => undefined);
    expect(await store.findIdentityById(outer.id)).toBeUndefined();
    expect(await present(inner!)).toEqual(nothing);

    const committed = await store.transaction((tx) => tx.transaction(writeAll));
    expect(await present(committed)).toEqual(everything);
  });

  it('a held password hash: a change waits for the sign-in that holds it, then revokes its session', async () => {
    const identity = identityRow({ password_hash: '$argon2id$verified' });
    await store.insertIdentity(identity);
    expect(await store.holdPasswordHash(identity.id, '$argon2id$other')).toBe(false);
    const session = sessionRow(identity.id);
    let holding = true;
    let changedWhileHeld = false;
    let change: Promise<number> | undefined;
    await store.transaction(async (tx) => {
      expect(await tx.holdPasswordHash(identity.id, '$argon2id$verified')).toBe(true);
      // A password change as the services make it: the new hash, then every session ended.
      change = store.transaction(async (other) => {
        await other.setIdentityPassword(identity.id, '$argon2id$changed', 1);
        return other.revokeIdentitySessions(identity.id, 1);
      });
      void change.then(() => (changedWhileHeld = holding));
      // Time for a change that does not wait to finish first (and so to miss the session).
      await new Promise((resolve) => setTimeout(resolve, 200));
      await tx.insertSession(stored(session));
    });
    holding = false;
    expect(await change).toBe(1);
    expect(changedWhileHeld).toBe(false);
    expect((await store.findSessionById(session.id))?.revoked_at).toBe(1);
    // The hash it held is gone: the next sign-in with it mints nothing.
    expect(await store.holdPasswordHash(identity.id, '$argon2id$verified')).toBe(false);
    expect(await store.holdPasswordHash(identity.id, '$argon2id$changed')).toBe(true);
  });

  it('serialises concurrent transactions without losing writes', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.transaction(writeAll)),
    );
    for (const rows of results) expect(await present(rows)).toEqual(everything);
  });
});

describeEachDatabase('migrations', (kind) => {
  const opened: StoreHandle[] = [];
  const databases: TestDatabase[] = [];
  const fresh = async () => {
    const db = await createTestDatabase(kind);
    databases.push(db);
    return db;
  };
  const open = (db: TestDatabase) => {
    const handle = db.open();
    opened.push(handle);
    return handle;
  };
  afterEach(async () => {
    for (const handle of opened.splice(0)) await handle.close();
    for (const db of databases.splice(0)) await db.drop();
  });

  it('applies every migration once; running again applies nothing', async () => {
    const store = open(await fresh());
    expect(await store.migrate()).toEqual(ALL);
    expect(await store.migrate()).toEqual([]);
    await store.insertIdentity(identityRow());
  });

  it('two handles migrating the same database at once apply each migration exactly once', async () => {
    const db = await fresh();
    const results = await Promise.all([open(db).migrate(), open(db).migrate()]);
    expect(results.flat().sort()).toEqual(ALL);
    const again = open(db);
    expect(await again.migrate()).toEqual([]);
    await again.insertIdentity(identityRow());
  });

  describe('across processes', () => {
    it('four processes starting together apply each migration exactly once', async () => {
      const db = await fresh();
      const args = ['--import', 'tsx', 'test/storage/fixtures/migrate.ts', db.databaseUrl];
      if (db.schema) args.push(db.schema);
      const outputs = await Promise.all(
        Array.from({ length: 4 }, () => run(process.execPath, args, { timeout: 60_000 })),
      );
      const applied = outputs.map((output) => JSON.parse(output.stdout) as string[]);
      expect(applied.flat().sort()).toEqual(ALL);
      expect(applied.filter((ids) => ids.length === 0)).toHaveLength(3);
      expect(await open(db).migrate()).toEqual([]);
    });
  });
});
