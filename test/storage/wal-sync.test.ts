import BetterSqlite3 from 'better-sqlite3';
import { statSync, symlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FlowRecord } from '../../src/domain/login-flows/flow.js';
import { newToken, randomSecret } from '../../src/lib/tokens.js';
import { StorageUnavailable } from '../../src/storage/errors.js';
import { openSqlite } from '../../src/storage/sqlite/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

/**
 * docs/sqlite.md: under synchronous=full a write is answered only once the WAL holding its
 * commit has been fdatasync'ed, off the server's thread (wal-sync.ts); rate-limit counters
 * and new login flows are answered without waiting, and buffered audit rows committed
 * without one. Observed on the real connection and
 * the real file handle: the statements as they run, and each fdatasync's start and end.
 */
describe('commits made durable off the event loop [sqlite]', () => {
  let db: TestDatabase;
  let store: StoreHandle;
  /** `sql:<statement>`, `sync:start`, `sync:end`, and what the test itself notes. */
  let events: string[];
  /** The next n fdatasyncs fail (an I/O error). */
  let failSyncs: number;

  async function openStore(synchronous: 'normal' | 'full'): Promise<void> {
    db = await createTestDatabase('sqlite');
    const probe = new BetterSqlite3(':memory:');
    const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<
      'run' | 'get' | 'all',
      (...args: unknown[]) => unknown
    >;
    probe.close();
    const handle = await open(db.file!, 'a');
    const fileHandle = Object.getPrototypeOf(handle) as { datasync(): Promise<void> };
    await handle.close();
    events = [];
    failSyncs = 0;
    for (const method of ['run', 'get', 'all'] as const) {
      const original = statement[method];
      vi.spyOn(statement, method).mockImplementation(function (
        this: BetterSqlite3.Statement,
        ...args: unknown[]
      ) {
        events.push(`sql:${this.source}`);
        return original.apply(this, args);
      });
    }
    const datasync = fileHandle.datasync;
    vi.spyOn(fileHandle, 'datasync').mockImplementation(async function (this: unknown) {
      events.push('sync:start');
      if (failSyncs > 0) {
        failSyncs -= 1;
        events.push('sync:failed');
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      }
      await datasync.call(this);
      events.push('sync:end');
    });
    store = openSqlite({ filename: db.file!, busyTimeoutMs: 1000, synchronous });
    await store.migrate();
    events = [];
  }

  afterEach(async () => {
    await store?.close();
    vi.restoreAllMocks();
    await db?.drop();
  });

  const flow = (): FlowRecord & { token_format: 'crc32' } => ({
    id: newToken('flow'),
    kind: 'login',
    csrf_token: randomSecret(),
    return_to: null,
    state: 'created',
    failed_attempts: 0,
    identity_id: null,
    first_method: null,
    issued_at: 1_000,
    expires_at: 900_000,
    token_format: 'crc32',
  });
  const syncs = () => events.filter((event) => event === 'sync:start').length;

  it('full: a transaction is answered after a WAL sync that began after its COMMIT', async () => {
    await openStore('full');
    const created = flow();
    await store.insertFlow(created);
    await store.transaction((tx) => tx.completeFlow(created.id, 2_000));
    events.push('answered');

    const commit = events.indexOf('sql:COMMIT');
    expect(commit).toBeGreaterThanOrEqual(0);
    expect(events.slice(commit + 1)).toEqual(['sync:start', 'sync:end', 'answered']);
  });

  it('full: buffered audit rows are committed without a sync (no one is answered on them)', async () => {
    await openStore('full');
    const row = {
      id: newToken('flow'),
      at: 1_000,
      action: 'probe',
      service_name: null,
      service_id: null,
      target_identity: null,
      outcome: 'success',
      details: '{}',
    };
    await store.insertAuditRecords([row]);
    // Committed, not left in an open transaction: a later synced commit covers it.
    expect(events).toEqual([
      'sql:BEGIN IMMEDIATE',
      expect.stringMatching(/^sql:INSERT INTO audit_log/),
      'sql:COMMIT',
    ]);
    expect(await store.listAuditRecords(10)).toEqual([
      expect.objectContaining({ id: row.id, action: 'probe' }),
    ]);
  });

  it("full: the OpenID provider's writes (a token issued, a code spent) are synced before the answer", async () => {
    await openStore('full');
    const code = {
      kind: 'AuthorizationCode',
      id: randomSecret(),
      payload: '{}',
      grant_id: null,
      client_id: null,
      uid: null,
      user_code: null,
      consumed_at: null,
      expires_at: 900_000,
    };
    await store.upsertOidcModel(code);
    events.push('issued');
    expect(await store.consumeOidcModel(code.kind, code.id, 2_000)).toBe(true);
    events.push('spent');
    const issued = events.indexOf('issued');
    expect(events.slice(issued - 3, issued + 1)).toEqual([
      expect.stringMatching(/^sql:INSERT INTO oidc_models/),
      'sync:start',
      'sync:end',
      'issued',
    ]);
    expect(events.slice(-4)).toEqual([
      expect.stringMatching(/^sql:UPDATE oidc_models SET consumed_at/),
      'sync:start',
      'sync:end',
      'spent',
    ]);
  });

  it('full: counters and new flows are answered without a sync', async () => {
    await openStore('full');
    expect(await store.hitRateLimit('k', 60_000, 1_000)).toEqual({ count: 1, reset_at: 61_000 });
    expect(await store.hitRateLimit('k', 60_000, 2_000)).toEqual({ count: 2, reset_at: 61_000 });
    // The window over: the count starts again, as through Kysely.
    expect(await store.hitRateLimit('k', 60_000, 61_000)).toEqual({
      count: 1,
      reset_at: 121_000,
    });
    const created = flow();
    await store.insertFlow(created);
    expect(await store.findFlow(created.id)).toEqual(created);
    expect(syncs()).toBe(0);
  });

  it('full: concurrent writes share syncs, each answered after one that began after its commit', async () => {
    await openStore('full');
    const answered: number[] = [];
    const commits: number[] = [];
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        store
          .transaction(async (tx) => {
            await tx.hitRateLimit(`key-${i}`, 60_000, 1_000);
            // COMMIT is the next statement this transaction runs.
            commits[i] = events.length;
          })
          .then(() => {
            answered[i] = events.length;
            events.push(`answered:${i}`);
          }),
      ),
    );
    const starts = events.flatMap((event, index) => (event === 'sync:start' ? [index] : []));
    const ends = events.flatMap((event, index) => (event === 'sync:end' ? [index] : []));
    expect(starts.length).toBeGreaterThanOrEqual(1);
    expect(starts.length).toBeLessThan(30);
    for (let i = 0; i < 30; i++) {
      expect(events[commits[i]!]).toBe('sql:COMMIT');
      const covering = starts.findIndex(
        (start, s) => start > commits[i]! && ends[s]! < answered[i]!,
      );
      expect(covering, `write ${i} was answered before a sync covered it`).toBeGreaterThanOrEqual(
        0,
      );
    }
  });

  it('full: a failed sync answers unavailable, then the store takes no write and is not ready until restart', async () => {
    await openStore('full');
    failSyncs = 1;
    await expect(store.transaction((tx) => tx.hitRateLimit('a', 60_000, 1_000))).rejects.toThrow(
      StorageUnavailable,
    );
    // Every later write is refused before it commits (the connection is query_only), the
    // unsynced kinds too, and readiness fails; reads still answer.
    await expect(store.transaction((tx) => tx.hitRateLimit('b', 60_000, 1_000))).rejects.toThrow(
      StorageUnavailable,
    );
    await expect(store.hitRateLimit('c', 60_000, 1_000)).rejects.toThrow(StorageUnavailable);
    await expect(store.insertFlow(flow())).rejects.toThrow(StorageUnavailable);
    await expect(store.ping()).rejects.toThrow(StorageUnavailable);
    expect(await store.findFlow(newToken('flow'))).toBeUndefined();
    expect(events.filter((event) => event === 'sync:start')).toHaveLength(1);
    // After a restart the store writes and syncs again.
    await store.close();
    store = openSqlite({ filename: db.file!, busyTimeoutMs: 1000, synchronous: 'full' });
    events = [];
    await store.transaction((tx) => tx.hitRateLimit('d', 60_000, 1_000));
    expect(events.slice(-2)).toEqual(['sync:start', 'sync:end']);
    await store.ping();
  });

  it("full: the file synced is the database's WAL, through a symbolic link too", async () => {
    db = await createTestDatabase('sqlite');
    const link = join(dirname(db.file!), 'linked.db');
    symlinkSync(db.file!, link);
    const handle = await open(db.file!, 'a');
    const fileHandle = Object.getPrototypeOf(handle) as { datasync(): Promise<void> };
    await handle.close();
    const synced: number[] = [];
    const datasync = fileHandle.datasync;
    vi.spyOn(fileHandle, 'datasync').mockImplementation(async function (this: {
      stat(): Promise<{ ino: number }>;
    }) {
      synced.push((await this.stat()).ino);
      await datasync.call(this);
    });
    store = openSqlite({ filename: link, busyTimeoutMs: 1000, synchronous: 'full' });
    await store.migrate();
    await store.transaction((tx) => tx.hitRateLimit('k', 60_000, 1_000));
    expect(synced.length).toBeGreaterThan(0);
    expect(new Set(synced)).toEqual(new Set([statSync(`${db.file!}-wal`).ino]));
  });

  it('normal: nothing waits for a sync', async () => {
    await openStore('normal');
    await store.hitRateLimit('k', 60_000, 1_000);
    await store.insertFlow(flow());
    await store.transaction((tx) => tx.hitRateLimit('other', 60_000, 1_000));
    expect(events).toContain('sql:COMMIT');
    expect(syncs()).toBe(0);
  });

  it('while a transaction is open, a counter waits and commits on its own, not with it', async () => {
    await openStore('full');
    let pending: Promise<unknown> | undefined;
    await expect(
      store.transaction(async (tx) => {
        await tx.hitRateLimit('inside', 60_000, 1_000);
        pending = store.hitRateLimit('outside', 60_000, 1_000);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await pending).toEqual({ count: 1, reset_at: 61_000 });
    // Through Kysely after the rollback, as an ordinary autocommit: synced like one.
    expect(syncs()).toBe(1);
    expect((await store.hitRateLimit('inside', 60_000, 2_000)).count).toBe(1);
    expect((await store.hitRateLimit('outside', 60_000, 2_000)).count).toBe(2);
  });
});
