import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/domain/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  PASSWORD,
  auditEntries,
  createIdentity,
  createSession,
  expectError,
} from '../helpers/core.js';
import { holdWriteLock, type LockHolder } from '../helpers/sqlite-lock.js';

/**
 * Issue 12 item 3: a second process holding SQLite's write lock (BEGIN EXCLUSIVE, as a
 * backup or `tessera sweep` may) must not freeze the server. The holder is a real child
 * process and releases only when the test says so: every "still answering" below is
 * observed while the lock is held, with no timing threshold.
 */
describe('another process holding the SQLite write lock [sqlite]', () => {
  let holder: LockHolder | undefined;
  afterEach(async () => {
    await holder?.release();
    holder = undefined;
  });

  /** The requests that need no write lock, each checked for its answer. */
  async function expectReadsAnswer(t: TestApp, tokens: Tokens, identity: Identity) {
    const whoami = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      headers: { cookie: `service_session=${tokens.session}` },
    });
    expect(whoami.statusCode).toBe(200);
    expect(whoami.json().identity.id).toBe(identity.id);
    expect((await t.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const verify = await t.call('POST', '/v1/sessions/verify', tokens.introspect, {
      token: tokens.session,
    });
    expect(verify.statusCode).toBe(200);
    const byId = await t.call('GET', `/v1/identities/${identity.id}`, tokens.read);
    expect(byId.json().display_name).toBe(identity.username);
    // Not a prepared read: it goes through Kysely's connection, which a waiting write
    // must not keep to itself.
    const byName = await t.call('GET', `/v1/identities?username=${identity.username}`, tokens.read);
    expect(byName.json().id).toBe(identity.id);
  }

  describe('with a write waiting for the lock', () => {
    let t: TestApp;
    // Far longer than the test needs: the write must still be waiting when it ends the lock.
    beforeAll(async () => {
      t = await createTestApp('sqlite', { SERVICE_DB_TIMEOUT_MS: '20000' });
    });
    afterAll(() => t?.close());

    it('whoami, /healthz, verify and reads keep answering; the write lands after the release', async () => {
      const tokens = await tokensFor(t);
      const identity = await createIdentity(t);
      tokens.session = (await createSession(t, identity.id)).token;
      const verified = (await auditEntries(t)).filter((row) => row.action === 'session_verify');

      holder = await holdWriteLock(t.db.file!);
      const entered = observeTransactions(t.deps.store);
      let answered = false;
      const write = t
        .call('PATCH', `/v1/identities/${identity.id}/profile`, tokens.write, {
          display_name: 'After the lock',
        })
        .finally(() => (answered = true));
      await entered;
      for (let round = 0; round < 3; round++) {
        await expectReadsAnswer(t, tokens, identity);
        expect(answered).toBe(false);
      }

      await holder.release();
      const res = await write;
      expect(res.statusCode).toBe(200);
      expect(res.json().display_name).toBe('After the lock');
      // The audit rows of the verify calls, buffered during the hold, were written after it.
      const rows = (await auditEntries(t)).filter((row) => row.action === 'session_verify');
      expect(rows.length - verified.length).toBe(3);
    });
  });

  describe(`past SERVICE_DB_TIMEOUT_MS`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp('sqlite', { SERVICE_DB_TIMEOUT_MS: '300' });
    });
    afterAll(() => t?.close());

    it('writes answer 504 timeout while the lock is held, reads answer, and all works after', async () => {
      const tokens = await tokensFor(t);
      const identity = await createIdentity(t);
      tokens.session = (await createSession(t, identity.id)).token;
      const profile = `/v1/identities/${identity.id}/profile`;
      const signIn = { username: identity.username, password: PASSWORD };

      holder = await holdWriteLock(t.db.file!);
      // A transaction (BEGIN IMMEDIATE waits), and a sign-in whose first write is a single
      // statement (the rate-limit counter).
      expectError(
        await t.call('PATCH', profile, tokens.write, { display_name: 'No' }),
        504,
        'timeout',
      );
      expectError(
        await t.call('POST', '/v1/authenticate/password', tokens.auth, signIn),
        504,
        'timeout',
      );
      await expectReadsAnswer(t, tokens, identity);
      await holder.release();

      const res = await t.call('PATCH', profile, tokens.write, { display_name: 'Yes' });
      expect(res.statusCode).toBe(200);
      expect(res.json().display_name).toBe('Yes');
      const signedIn = await t.call('POST', '/v1/authenticate/password', tokens.auth, signIn);
      expect(signedIn.statusCode).toBe(200);
      // The refusals were audited: their rows waited in memory for the lock to go.
      const timedOut = (await auditEntries(t)).filter((row) => row.outcome === 'timeout');
      expect(timedOut.map((row) => row.action).sort()).toEqual([
        'authenticate_password',
        'identity_update',
      ]);
    });
  });
});

interface Tokens {
  write: string;
  read: string;
  introspect: string;
  auth: string;
  session: string;
}
type Identity = Awaited<ReturnType<typeof createIdentity>>;

async function tokensFor(t: TestApp): Promise<Tokens> {
  return {
    write: await t.token('identity_write'),
    read: await t.token('identity_read'),
    introspect: await t.token('introspect'),
    auth: await t.token('direct_auth'),
    session: '',
  };
}

/**
 * Resolves when the next transaction starts (once the write under test reached the
 * database): from then on it is waiting for the lock, and the checks that follow happen
 * during that wait.
 */
function observeTransactions(store: Store): Promise<void> {
  const original = store.transaction;
  const transaction = original.bind(store);
  return new Promise((resolve) => {
    store.transaction = (work) => {
      store.transaction = original;
      resolve();
      return transaction(work);
    };
  });
}
