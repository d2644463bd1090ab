import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAST_USE_GRANULARITY_MS } from '../../src/domain/sessions/last-use.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { identityRow, sessionRow, stored, T0 } from '../helpers/records.js';
import { createTestDatabase, describeEachDatabase } from '../helpers/databases.js';
import { addUser, asUser, browserSignIn } from './helpers.js';

/** Issue 14 item 1: "last use" is kept coarsely, written off the session check's path. */
describeEachDatabase('session last use', (kind) => {
  let t: TestApp;
  let introspect: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    introspect = await t.token('introspect');
  });
  afterAll(() => t?.close());

  async function lastUsed(id: string): Promise<number | null | undefined> {
    await t.deps.lastUse.flush();
    return (await t.deps.store.findSessionById(id))?.last_used_at;
  }

  it('the sign-in is the first use; a check records a use only once the last is 5 minutes old', async () => {
    const user = await addUser(t);
    const session = await browserSignIn(t, user.username);
    const signedInAt = t.clock.now();
    expect(await lastUsed(session.id)).toBe(signedInAt);

    const whoami = async () => {
      const res = await asUser(t, session, { method: 'GET', url: '/v1/whoami' });
      expect(res.statusCode).toBe(200);
    };
    t.clock.advance(LAST_USE_GRANULARITY_MS - 1);
    await whoami();
    expect(await lastUsed(session.id)).toBe(signedInAt);

    t.clock.advance(1);
    await whoami();
    const touched = t.clock.now();
    expect(await lastUsed(session.id)).toBe(touched);

    t.clock.advance(60_000);
    await whoami();
    expect(await lastUsed(session.id)).toBe(touched);

    // /v1/sessions/verify is a use too.
    t.clock.advance(LAST_USE_GRANULARITY_MS);
    const verified = await t.call('POST', '/v1/sessions/verify', introspect, {
      token: session.token,
    });
    expect(verified.statusCode).toBe(200);
    expect(await lastUsed(session.id)).toBe(t.clock.now());
    // ... and the list shows it.
    const listed = await t.call('GET', `/v1/identities/${user.id}/sessions`, introspect);
    expect(listed.json()[0].last_used_at).toBe(new Date(t.clock.now()).toISOString());
  });

  it('a refused check records nothing', async () => {
    const user = await addUser(t);
    const session = await browserSignIn(t, user.username);
    const signedInAt = t.clock.now();
    const revoke = await t.token('revoke');
    await t.call('POST', '/v1/sessions/revoke', revoke, { session_id: session.id });
    t.clock.advance(LAST_USE_GRANULARITY_MS * 2);
    expect((await asUser(t, session, { method: 'GET', url: '/v1/whoami' })).statusCode).toBe(401);
    expect(await lastUsed(session.id)).toBe(signedInAt);
  });

  it('many checks of one stale session at once write it once, to one of their times', async () => {
    const user = await addUser(t);
    const session = await browserSignIn(t, user.username);
    t.clock.advance(LAST_USE_GRANULARITY_MS);
    const now = t.clock.now();
    const store = t.deps.store;
    const touch = store.touchSessions;
    const batches: number[] = [];
    store.touchSessions = (uses, granularity) => {
      batches.push(uses.length);
      return touch.call(store, uses, granularity);
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => asUser(t, session, { method: 'GET', url: '/v1/whoami' })),
    );
    expect(answers.map((res) => res.statusCode)).toEqual(Array(20).fill(200));
    expect(await lastUsed(session.id)).toBe(now);
    store.touchSessions = touch;
    // One batch, holding the session once.
    expect(batches).toEqual([1]);
  });

  describe('touchSessions (the storage contract)', () => {
    it('writes each row only while its use is NULL or at least the granularity older', async () => {
      const identity = identityRow();
      await t.deps.store.insertIdentity(identity);
      const a = sessionRow(identity.id);
      const b = sessionRow(identity.id, { last_used_at: T0 });
      await t.deps.store.insertSession(stored(a));
      await t.deps.store.insertSession(stored(b));
      const read = async (id: string) => (await t.deps.store.findSessionById(id))?.last_used_at;
      const touch = (uses: { id: string; at: number }[]) => t.deps.store.touchSessions(uses, 10);
      // An unknown id in the batch is skipped, the others written.
      await touch([
        { id: a.id, at: T0 + 5 },
        { id: identityRow().id, at: T0 },
        { id: b.id, at: T0 + 9 },
      ]);
      expect([await read(a.id), await read(b.id)]).toEqual([T0 + 5, T0]);
      await touch([{ id: b.id, at: T0 + 10 }]);
      expect(await read(b.id)).toBe(T0 + 10);
      // An older use never overwrites a newer one, in a later batch or in the same one.
      await touch([{ id: a.id, at: T0 - 100 }]);
      expect(await read(a.id)).toBe(T0 + 5);
      await touch([
        { id: a.id, at: T0 + 200 },
        { id: a.id, at: T0 + 100 },
      ]);
      expect(await read(a.id)).toBe(T0 + 200);
    });
  });
});

/**
 * Two instances flushing overlapping batches at once, in opposite orders: each batch is one
 * UPDATE, so on PostgreSQL each locks its rows in the order of its plan, never in the
 * batch's. Both must finish (no deadlock), and every session ends at the latest use.
 */
describeEachDatabase('session last use: two instances flushing at once', (kind) => {
  it('both batches land, and the latest use wins', async () => {
    const db = await createTestDatabase(kind);
    const [one, two] = [db.open({ timeoutMs: 10_000 }), db.open({ timeoutMs: 10_000 })];
    try {
      await one.migrate();
      const identity = identityRow();
      await one.insertIdentity(identity);
      const ids: string[] = [];
      for (let i = 0; i < 300; i++) {
        const session = sessionRow(identity.id);
        await one.insertSession(stored(session));
        ids.push(session.id);
      }
      const reversed = [...ids].reverse();
      for (let round = 1; round <= 5; round++) {
        const at = T0 + round * 100;
        await Promise.all([
          one.touchSessions(
            ids.map((id) => ({ id, at })),
            10,
          ),
          two.touchSessions(
            reversed.map((id) => ({ id, at: at + 50 })),
            10,
          ),
        ]);
      }
      const last = await Promise.all(ids.map((id) => two.findSessionById(id)));
      expect(new Set(last.map((session) => session?.last_used_at))).toEqual(new Set([T0 + 550]));
    } finally {
      await Promise.all([one.close(), two.close()]);
      await db.drop();
    }
  });
});
