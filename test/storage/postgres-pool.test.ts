import { randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { StorageTimeout } from '../../src/storage/errors.js';
import { PostgresPool } from '../../src/storage/postgres/pool.js';
import { describeOnPostgres, postgresUrl } from '../helpers/databases.js';
import { asAdmin } from '../helpers/postgres-admin.js';
import { proxyToPostgres } from '../helpers/tcp-proxy.js';

const pid = async (pool: PostgresPool) =>
  (await pool.query<{ pid: number }>({ text: 'SELECT pg_backend_pid() AS pid' })).rows[0]!.pid;

describeOnPostgres('PostgresPool', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  function open(url = postgresUrl, timeoutMs = 5000): PostgresPool {
    const pool = new PostgresPool({ connectionString: url, timeoutMs, poolSize: 1 });
    cleanup.push(() => pool.end());
    return pool;
  }

  it('sets idle_in_transaction_session_timeout on every session as a backstop', async () => {
    const show = (pool: PostgresPool) =>
      pool.query<{ value: string }>({
        text: "SELECT current_setting('idle_in_transaction_session_timeout') AS value",
      });
    expect((await show(open(postgresUrl, 300))).rows[0]).toEqual({ value: '10s' });
    expect((await show(open(postgresUrl, 8000))).rows[0]).toEqual({ value: '16s' });
  });

  it('closes a connection released inside a transaction instead of reusing it', async () => {
    const pool = open();
    const lease = await pool.connect();
    await lease.query('BEGIN');
    const inTransaction = (await lease.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
      .rows[0]!.pid;
    lease.release();
    // Pool of one: a different session, hence a fresh connection, outside any transaction.
    expect(await pid(pool)).not.toBe(inTransaction);
    const lease2 = await pool.connect();
    expect((await lease2.query('SELECT 1')).rowCount).toBe(1);
    lease2.release();
  });

  it('keeps a connection whose statement failed with a server error', async () => {
    const pool = open();
    const before = await pid(pool);
    await expect(pool.query({ text: 'SELECT 1/0' })).rejects.toMatchObject({ code: '22012' });
    expect(await pid(pool)).toBe(before);
  });

  it('answers a statement the server never gets with a timeout, and discards its connection', async () => {
    const { proxy, url: proxied } = await proxyToPostgres();
    cleanup.push(() => proxy.stop());
    const pool = open(proxied.toString(), 1000);
    const before = await pid(pool);
    const held = proxy.holdClientData((chunk) => chunk.includes('pg_sleep_stand_in'));
    await expect(
      pool.query({ text: "SELECT 'pg_sleep_stand_in' AS marker" }),
    ).rejects.toBeInstanceOf(StorageTimeout);
    held.release();
    expect(await pid(pool)).not.toBe(before);
  });

  it('resolves end() only once the server has closed every session', async () => {
    const applicationName = `tessera_pool_${randomBytes(4).toString('hex')}`;
    const url = new URL(postgresUrl);
    url.searchParams.set('application_name', applicationName);
    const pool = new PostgresPool({
      connectionString: url.toString(),
      timeoutMs: 5000,
      poolSize: 3,
    });
    const leases = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
    for (const lease of leases) lease.release();
    await pool.end();
    const left = await asAdmin((admin) =>
      admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
        applicationName,
      ]),
    );
    expect(left.rows).toEqual([]);
  });
});
