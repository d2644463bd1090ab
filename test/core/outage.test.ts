import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageUnavailable } from '../../src/storage/errors.js';
import { openStorage } from '../../src/storage/open.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, expectError } from '../helpers/core.js';
import {
  createTestDatabase,
  describeOnPostgres,
  postgresUrl,
  type TestDatabase,
} from '../helpers/databases.js';
import { appOnStore, type StoreApp } from '../helpers/store-app.js';
import { proxyToPostgres, TcpProxy } from '../helpers/tcp-proxy.js';

/** API-DECISIONS 3: 503 `unavailable` while the database is unreachable, 504 `timeout`. */

describeOnPostgres('database outage', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: StoreApp;
  let identityId: string;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const proxied = await proxyToPostgres();
    proxy = proxied.proxy;
    const store = openStorage({
      databaseUrl: proxied.url.toString(),
      timeoutMs: 2000,
      poolSize: 4,
      schema: db.schema,
    });
    await store.migrate();
    t = await appOnStore(store);
    token = await t.token('identity_read');
    const identity = await t.call('POST', '/v1/register', await t.token('direct_auth'), {
      username: 'outage-user',
      password: 'correct horse battery',
    });
    identityId = identity.json().id;
  });
  afterAll(async () => {
    await proxy?.start().catch(() => undefined);
    await t?.close();
    await proxy?.stop();
    await db?.drop();
  });

  const read = () => t.call('GET', `/v1/identities/${identityId}`, token);
  const ready = () => t.app.inject({ method: 'GET', url: '/readyz' });

  it('answers 503 unavailable while unreachable and recovers without a restart', async () => {
    expect((await read()).statusCode).toBe(200);
    expect((await ready()).statusCode).toBe(200);

    await proxy.stop();
    for (let i = 0; i < 4; i += 1) expectError(await read(), 503, 'unavailable');
    const notReady = await ready();
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toEqual({ status: 'unavailable', error: 'unavailable' });
    const healthz = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(healthz.statusCode).toBe(200);

    await proxy.start();
    expect((await ready()).statusCode).toBe(200);
    const back = await read();
    expect(back.statusCode).toBe(200);
    expect(back.json().id).toBe(identityId);

    // The refused requests were audited too: their rows waited for the database.
    await t.deps.audit.flush();
    const refused = (await t.deps.store.listAuditRecords(1000)).filter(
      (row) => row.action === 'identity_read' && row.outcome === 'unavailable',
    );
    expect(refused).toHaveLength(4);
  });

  it('answers 503 (not 504) when connections hang unanswered (black-holed network)', async () => {
    const hole = new TcpProxy('127.0.0.1', 9);
    hole.forward = false;
    const url = new URL(postgresUrl);
    url.host = `127.0.0.1:${await hole.start()}`;
    const store = openStorage({
      databaseUrl: url.toString(),
      timeoutMs: 300,
      poolSize: 2,
      schema: db.schema,
    });
    const stranded = await appOnStore(store);
    try {
      const res = await stranded.call('GET', `/v1/identities/${identityId}`, token);
      expectError(res, 503, 'unavailable');
      expect((await stranded.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    } finally {
      await stranded.close();
      await hole.stop();
    }
  });

  it('survives a connection lost in the middle of a transaction', async () => {
    let began = () => undefined as void;
    let proceed = () => undefined as void;
    const started = new Promise<void>((resolve) => (began = resolve));
    const paused = new Promise<void>((resolve) => (proceed = resolve));
    const inFlight = t.deps.store
      .transaction(async (tx) => {
        await tx.findIdentityById(identityId);
        began();
        await paused;
        return tx.findIdentityById(identityId);
      })
      .catch((error: unknown) => error);
    await started;
    await proxy.stop();
    proceed();
    // Unhandled, the lost connection's 'error' event would have crashed the process here.
    expect(await inFlight).toBeInstanceOf(StorageUnavailable);
    // Pooled connections cut with it fail once each and are discarded.
    for (let i = 0; i < 4; i += 1) expectError(await read(), 503, 'unavailable');
    await proxy.start();
    expect((await read()).statusCode).toBe(200);
  });

  it('a write during the outage is 503 and is not applied later', async () => {
    const write = await t.token('identity_write');
    await proxy.stop();
    const res = await t.call('PATCH', `/v1/identities/${identityId}/profile`, write, {
      display_name: 'During Outage',
    });
    expectError(res, 503, 'unavailable');
    for (let i = 0; i < 4; i += 1) expectError(await read(), 503, 'unavailable');
    await proxy.start();
    expect((await read()).json().display_name).toBe('outage-user');
  });
});

describeOnPostgres('query timeout', () => {
  let t: TestApp;
  let db: TestDatabase;
  let locker: pg.Client;
  beforeAll(async () => {
    // Migrated first under the default timeout: on a loaded machine the migrations alone
    // can take longer than the 300 ms this suite gives its queries.
    db = await createTestDatabase('postgres');
    const migrating = db.open({ timeoutMs: 5_000 });
    await migrating.migrate();
    await migrating.close();
    t = await createTestApp('postgres', { SERVICE_DB_TIMEOUT_MS: '300' }, db);
    locker = new pg.Client({
      connectionString: postgresUrl,
      options: `-c search_path=${t.db.schema}`,
    });
    await locker.connect();
  });
  afterAll(async () => {
    await locker?.end();
    await t?.close();
    await db?.drop();
  });

  it('answers 504 timeout while another client holds the row lock, then serves again', async () => {
    const write = await t.token('identity_write');
    const identity = await createIdentity(t);
    const url = `/v1/identities/${identity.id}/profile`;
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM identities WHERE id = $1 FOR UPDATE', [identity.id]);
    try {
      expectError(await t.call('PATCH', url, write, { display_name: 'Blocked' }), 504, 'timeout');
    } finally {
      await locker.query('ROLLBACK');
    }
    const res = await t.call('PATCH', url, write, { display_name: 'Unblocked' });
    expect(res.statusCode).toBe(200);
    expect(res.json().display_name).toBe('Unblocked');
  });
});

describe('write lock timeout [sqlite]', () => {
  let t: TestApp;
  let other: BetterSqlite3.Database;
  beforeAll(async () => {
    t = await createTestApp('sqlite', { SERVICE_DB_TIMEOUT_MS: '300' });
    other = new BetterSqlite3(t.db.file!);
  });
  afterAll(async () => {
    other?.close();
    await t?.close();
  });

  it('answers 504 timeout while another connection holds the write lock, then serves again', async () => {
    const write = await t.token('identity_write');
    const read = await t.token('identity_read');
    const identity = await createIdentity(t);
    const url = `/v1/identities/${identity.id}/profile`;
    other.exec('BEGIN IMMEDIATE');
    try {
      expectError(await t.call('PATCH', url, write, { display_name: 'Blocked' }), 504, 'timeout');
      // Reads are not blocked by a writer (WAL).
      expect((await t.call('GET', `/v1/identities/${identity.id}`, read)).statusCode).toBe(200);
    } finally {
      other.exec('ROLLBACK');
    }
    const res = await t.call('PATCH', url, write, { display_name: 'Unblocked' });
    expect(res.statusCode).toBe(200);
    expect((await t.deps.store.findIdentityById(identity.id))?.display_name).toBe('Unblocked');
  });
});
