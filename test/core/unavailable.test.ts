import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStorage } from '../../src/storage/open.js';
import { expectError } from '../helpers/core.js';
import { describeOnPostgres } from '../helpers/databases.js';
import { asAdmin, createScratchDatabase, type ScratchDatabase } from '../helpers/postgres-admin.js';
import { appOnStore, type StoreApp } from '../helpers/store-app.js';

/**
 * Issue 11 item 3: every "cannot serve now" condition of a real PostgreSQL answers 503
 * `unavailable` (clients retry), on /readyz and on the API, and service resumes without a
 * restart once the condition ends.
 */
describeOnPostgres('PostgreSQL refusing service', () => {
  let scratch: ScratchDatabase;
  let t: StoreApp;
  let read: string;
  let write: string;
  let identityId: string;

  beforeAll(async () => {
    // A role of its own: connection limits do not apply to superusers.
    scratch = await createScratchDatabase({ ownRole: true });
    const store = openStorage({ databaseUrl: scratch.url, timeoutMs: 5000, poolSize: 4 });
    await store.migrate();
    t = await appOnStore(store);
    read = await t.token('identity_read');
    write = await t.token('identity_write');
    const registered = await t.call('POST', '/v1/register', await t.token('direct_auth'), {
      username: 'refused-user',
      password: 'correct horse battery',
    });
    identityId = registered.json().id;
  });
  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });

  const getIdentity = () => t.call('GET', `/v1/identities/${identityId}`, read);
  const patchIdentity = (display_name: string) =>
    t.call('PATCH', `/v1/identities/${identityId}/profile`, write, { display_name });
  const ready = () => t.app.inject({ method: 'GET', url: '/readyz' });
  const admin = (sql: string) => asAdmin((client) => client.query(sql));

  async function expectUnavailableEverywhere() {
    for (let i = 0; i < 3; i += 1) expectError(await getIdentity(), 503, 'unavailable');
    const notReady = await ready();
    expect({ status: notReady.statusCode, body: notReady.json() }).toEqual({
      status: 503,
      body: { status: 'unavailable', error: 'unavailable' },
    });
  }

  async function expectServing() {
    expect((await ready()).statusCode).toBe(200);
    expect((await getIdentity()).statusCode).toBe(200);
  }

  it('database not accepting connections (ALLOW_CONNECTIONS false, SQLSTATE 55000)', async () => {
    await expectServing();
    await admin(`ALTER DATABASE ${scratch.name} ALLOW_CONNECTIONS false`);
    await scratch.terminateSessions();
    try {
      await expectUnavailableEverywhere();
      expectError(await patchIdentity('Refused'), 503, 'unavailable');
    } finally {
      await admin(`ALTER DATABASE ${scratch.name} ALLOW_CONNECTIONS true`);
    }
    await expectServing();
  });

  it('too many connections (role CONNECTION LIMIT, SQLSTATE 53300)', async () => {
    await admin(`ALTER ROLE ${scratch.role} CONNECTION LIMIT 0`);
    await scratch.terminateSessions();
    try {
      await expectUnavailableEverywhere();
    } finally {
      await admin(`ALTER ROLE ${scratch.role} CONNECTION LIMIT -1`);
    }
    await expectServing();
  });

  it('read-only database (default_transaction_read_only, SQLSTATE 25006): writes 503, reads served, not ready', async () => {
    await admin(`ALTER DATABASE ${scratch.name} SET default_transaction_read_only = on`);
    // A store of its own: every session it opens starts read-only.
    const readOnly = await appOnStore(
      openStorage({ databaseUrl: scratch.url, timeoutMs: 5000, poolSize: 4 }),
    );
    try {
      const url = `/v1/identities/${identityId}`;
      for (let i = 0; i < 3; i += 1) {
        const res = await readOnly.call('PATCH', `${url}/profile`, write, { display_name: 'RO' });
        expectError(res, 503, 'unavailable');
      }
      const res = await readOnly.call('GET', url, read);
      expect(res.statusCode).toBe(200);
      expect(res.json().display_name).toBe('refused-user');
      // It answers, but can sign no one in: a load balancer must take it out of rotation.
      for (let i = 0; i < 2; i += 1) {
        const notReady = await readOnly.app.inject({ method: 'GET', url: '/readyz' });
        expect({ status: notReady.statusCode, body: notReady.json() }).toEqual({
          status: 503,
          body: { status: 'unavailable', error: 'unavailable' },
        });
      }
    } finally {
      await readOnly.close();
      await admin(`ALTER DATABASE ${scratch.name} RESET default_transaction_read_only`);
    }
    const res = await patchIdentity('Writable');
    expect(res.statusCode).toBe(200);
    expect(res.json().display_name).toBe('Writable');
    // Writable again: a store opened now is ready, without a restart of anything.
    const writable = await appOnStore(
      openStorage({ databaseUrl: scratch.url, timeoutMs: 5000, poolSize: 4 }),
    );
    try {
      expect((await writable.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      await writable.close();
    }
  });

  it('administrator shutdown of the session under a statement (pg_terminate_backend, 57P01)', async () => {
    const locker = new pg.Client({ connectionString: scratch.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM identities WHERE id = $1 FOR UPDATE', [identityId]);
      const blocked = patchIdentity('Terminated');
      // The PATCH's session, waiting for the row lock.
      let waiting: number | undefined;
      while (waiting === undefined) {
        const { rows } = await locker.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        waiting = rows[0]?.pid;
      }
      await asAdmin((client) => client.query('SELECT pg_terminate_backend($1)', [waiting]));
      expectError(await blocked, 503, 'unavailable');
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect((await patchIdentity('After Shutdown')).statusCode).toBe(200);
  });
});
