import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FlowRecord } from '../../src/domain/login-flows/flow.js';
import { newToken, randomSecret } from '../../src/lib/tokens.js';
import { openSqlite } from '../../src/storage/sqlite/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

/**
 * docs/sqlite.md: under synchronous=full, rate-limit counters and new login flows commit
 * without the WAL fsync; every other commit keeps it. Observed on the real connection:
 * the synchronous level in force when each statement runs.
 */
describe('writes committed without fsync [sqlite]', () => {
  let db: TestDatabase;
  let store: StoreHandle;
  /** [statement text, PRAGMA synchronous while it ran] */
  let seen: Array<[string, number]>;

  async function open(synchronous: 'normal' | 'full'): Promise<void> {
    db = await createTestDatabase('sqlite');
    const raw = new BetterSqlite3(':memory:');
    const proto = Object.getPrototypeOf(raw.prepare('SELECT 1')) as Record<
      'run' | 'get' | 'all',
      (...args: unknown[]) => unknown
    >;
    raw.close();
    seen = [];
    let inside = false;
    for (const method of ['run', 'get', 'all'] as const) {
      const original = proto[method];
      vi.spyOn(proto, method).mockImplementation(function (
        this: BetterSqlite3.Statement,
        ...args: unknown[]
      ) {
        if (!inside) {
          inside = true;
          try {
            const level = this.database.pragma('synchronous', { simple: true }) as number;
            seen.push([this.source, level]);
          } finally {
            inside = false;
          }
        }
        return original.apply(this, args);
      });
    }
    store = openSqlite({ filename: db.file!, busyTimeoutMs: 1000, synchronous });
    await store.migrate();
    seen = [];
  }

  afterEach(async () => {
    vi.restoreAllMocks();
    await store?.close();
    await db?.drop();
  });

  const flow = (): FlowRecord => ({
    id: newToken('flow'),
    csrf_token: randomSecret(),
    return_to: null,
    state: 'created',
    failed_attempts: 0,
    identity_id: null,
    first_method: null,
    issued_at: 1_000,
    expires_at: 900_000,
  });
  const levelOf = (pattern: RegExp) =>
    seen.filter(([sql]) => pattern.test(sql)).map(([, level]) => level);

  it('full: counters and new flows run at NORMAL, other commits at FULL, and FULL stays set', async () => {
    await open('full');
    expect(await store.hitRateLimit('k', 60_000, 1_000)).toEqual({ count: 1, reset_at: 61_000 });
    expect(await store.hitRateLimit('k', 60_000, 2_000)).toEqual({ count: 2, reset_at: 61_000 });
    // The window over: the count starts again, as through Kysely.
    expect(await store.hitRateLimit('k', 60_000, 61_000)).toEqual({
      count: 1,
      reset_at: 121_000,
    });
    const created = { ...flow(), token_format: 'crc32' as const };
    await store.insertFlow(created);
    expect(await store.findFlow(created.id)).toEqual(created);
    await store.transaction((tx) => tx.completeFlow(created.id, 2_000));

    expect(levelOf(/^insert into "rate_limits"/)).toEqual([1, 1, 1]);
    expect(levelOf(/^insert into "flows"/)).toEqual([1]);
    expect(levelOf(/^update "flows"/)).toEqual([2]);
    expect(levelOf(/^COMMIT$/)).toEqual([2]);
    // The connection's own setting afterwards (read through a statement the spy records).
    seen = [];
    await store.ping();
    expect(seen.at(-1)).toEqual(['SELECT 1', 2]);
  });

  it('normal: nothing is switched, everything runs at NORMAL', async () => {
    await open('normal');
    await store.hitRateLimit('k', 60_000, 1_000);
    await store.insertFlow({ ...flow(), token_format: 'crc32' });
    await store.transaction((tx) => tx.hitRateLimit('other', 60_000, 1_000));
    expect(new Set(seen.map(([, level]) => level))).toEqual(new Set([1]));
  });

  it('while a transaction is open, a counter waits and commits on its own, not with it', async () => {
    await open('full');
    let pending: Promise<unknown> | undefined;
    await expect(
      store.transaction(async (tx) => {
        await tx.hitRateLimit('inside', 60_000, 1_000);
        pending = store.hitRateLimit('outside', 60_000, 1_000);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await pending).toEqual({ count: 1, reset_at: 61_000 });
    // Through Kysely after the rollback, as an ordinary (synced) autocommit.
    expect(levelOf(/^insert into "rate_limits"/)).toEqual([2, 2]);
    expect((await store.hitRateLimit('inside', 60_000, 2_000)).count).toBe(1);
    expect((await store.hitRateLimit('outside', 60_000, 2_000)).count).toBe(2);
  });
});
