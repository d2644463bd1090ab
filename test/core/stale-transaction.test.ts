import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStorage } from '../../src/storage/open.js';
import { expectError } from '../helpers/core.js';
import {
  createTestDatabase,
  describeOnPostgres,
  postgresUrl,
  type TestDatabase,
} from '../helpers/databases.js';
import { appOnStore, type StoreApp } from '../helpers/store-app.js';
import { proxyToPostgres, TcpProxy } from '../helpers/tcp-proxy.js';

/** The simple-protocol query message Kysely sends to open a transaction. */
const isBegin = (chunk: Buffer) => chunk.toString('latin1').slice(5) === 'begin\0';

/**
 * Issue 12 item 4: a BEGIN that reaches the server after the client gave up on it (504)
 * must not leave its connection in the pool, where later single-statement writes (the
 * buffered audit rows) would run inside that orphaned transaction and vanish with it.
 */
describeOnPostgres('stale BEGIN after a timeout', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: StoreApp;
  let outside: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const direct = db.open();
    await direct.migrate();
    await direct.close();
    const proxied = await proxyToPostgres();
    proxy = proxied.proxy;
    // One connection (SERVICE_DB_POOL_SIZE=1): whatever the timed-out BEGIN leaves behind
    // is what the next statement gets.
    const store = openStorage({
      databaseUrl: proxied.url.toString(),
      timeoutMs: 1500,
      poolSize: 1,
      schema: db.schema,
    });
    t = await appOnStore(store);
    outside = new pg.Client({
      connectionString: postgresUrl,
      options: `-c search_path=${db.schema}`,
    });
    await outside.connect();
  });
  afterAll(async () => {
    await outside?.end();
    await t?.close().catch(() => undefined);
    await proxy?.stop();
    await db?.drop();
  });

  /** Audit rows committed, as any other connection sees them. */
  const committed = async (action: string) =>
    (
      await outside.query<{ outcome: string }>(
        'SELECT outcome FROM audit_log WHERE action = $1 ORDER BY at',
        [action],
      )
    ).rows.map((row) => row.outcome);

  it('keeps the audit rows written after a BEGIN that arrived late', async () => {
    const read = await t.token('identity_read');
    const write = await t.token('identity_write');
    const registered = await t.call('POST', '/v1/register', await t.token('direct_auth'), {
      username: 'stale-begin',
      password: 'correct horse battery',
    });
    const id = registered.json().id as string;

    const held = proxy.holdClientData(isBegin);
    const patch = t.call('PATCH', `/v1/identities/${id}/profile`, write, {
      display_name: 'Never Applied',
    });
    await held.reached;
    expectError(await patch, 504, 'timeout');
    // The BEGIN now reaches the server, on whatever connection sent it.
    held.release();

    for (let i = 0; i < 3; i += 1) {
      expect((await t.call('GET', `/v1/identities/${id}`, read)).statusCode).toBe(200);
    }
    await t.deps.audit.flush();

    expect(await committed('identity_read')).toEqual(['ok', 'ok', 'ok']);
    expect(await committed('identity_update')).toEqual(['timeout']);
    const profile = await outside.query('SELECT display_name FROM identities WHERE id = $1', [id]);
    expect(profile.rows[0].display_name).not.toBe('Never Applied');
    // No session of this store sits inside a transaction.
    const stuck = await outside.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND query ILIKE 'begin'",
    );
    expect(stuck.rows[0].n).toBe(0);
  });
});
