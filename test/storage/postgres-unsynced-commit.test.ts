import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StoreHandle } from '../../src/storage/store.js';
import { type TestDatabase, createTestDatabase, describeOnPostgres } from '../helpers/databases.js';
import { T0, auditRow, flowRow, identityRow, sessionRow, stored } from '../helpers/records.js';

/**
 * Which commits on PostgreSQL wait for the WAL flush (postgres/unsynced-commit.ts): rate-limit
 * counters, new flows and buffered audit rows do not, as on SQLite; everything else does,
 * the audit row a mutation writes with its change included, and no connection keeps the
 * setting for the next caller. A deferred trigger runs at commit, before the commit is
 * recorded, so it sees the `synchronous_commit` that commit obeys.
 */
describeOnPostgres('commits without the WAL flush', () => {
  let db: TestDatabase;
  let store: StoreHandle;
  let client: pg.Client;

  /** table name → the synchronous_commit of each commit that wrote a row into it, in order. */
  async function seenAtCommit(): Promise<Record<string, string[]>> {
    const { rows } = await client.query<{ tbl: string; value: string }>(
      'SELECT tbl, value FROM commit_settings ORDER BY n',
    );
    await client.query('DELETE FROM commit_settings');
    const seen: Record<string, string[]> = {};
    for (const row of rows) (seen[row.tbl] ??= []).push(row.value);
    return seen;
  }

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    store = db.open();
    await store.migrate();
    client = new pg.Client({
      connectionString: db.databaseUrl,
      options: `-c search_path=${db.schema}`,
    });
    await client.connect();
    await client.query(`
      CREATE TABLE commit_settings (n BIGSERIAL PRIMARY KEY, tbl TEXT NOT NULL, value TEXT NOT NULL);
      CREATE FUNCTION record_commit_setting() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO commit_settings (tbl, value)
            VALUES (TG_TABLE_NAME, current_setting('synchronous_commit'));
          RETURN NULL;
        END $$`);
    for (const table of ['rate_limits', 'flows', 'audit_log', 'sessions']) {
      await client.query(`CREATE CONSTRAINT TRIGGER ${table}_commit_setting
        AFTER INSERT OR UPDATE ON ${table} DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION record_commit_setting()`);
    }
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await db?.drop();
  });

  it('a counter, a new flow and a buffered audit batch commit unsynced', async () => {
    await store.hitRateLimit('login:address:127.0.0.1', 60_000, T0);
    await store.hitRateLimit('login:address:127.0.0.1', 60_000, T0);
    await store.hitRateLimits(
      [
        { key: 'login:address:::1', windowMs: 60_000, limit: 10 },
        { key: 'login:username:ada', windowMs: 60_000, limit: 10 },
      ],
      T0,
    );
    await store.insertFlow(flowRow());
    await store.insertAuditRecords([auditRow(), auditRow()]);
    expect(await seenAtCommit()).toEqual({
      rate_limits: ['off', 'off', 'off', 'off'],
      flows: ['off'],
      audit_log: ['off', 'off'],
    });
  });

  it('a mutation, its audit row and the next callers of the same connections stay synced', async () => {
    const identity = identityRow();
    await store.insertIdentity(identity);
    for (let i = 0; i < 3; i++) {
      // Unsynced writes on the pool's connections, then synced ones on the same connections.
      await store.hitRateLimit(`key-${i}`, 60_000, T0);
      await store.insertAuditRecords([auditRow()]);
      await store.transaction(async (tx) => {
        await tx.insertSession(stored(sessionRow(identity.id)));
        await tx.insertAuditRecords([auditRow({ action: 'session_issued' })]);
        await tx.hitRateLimit(`in-transaction-${i}`, 60_000, T0);
      });
    }
    expect(await seenAtCommit()).toEqual({
      rate_limits: ['off', 'on', 'off', 'on', 'off', 'on'],
      audit_log: ['off', 'on', 'off', 'on', 'off', 'on'],
      sessions: ['on', 'on', 'on'],
    });
    const { rows } = await client.query<{ value: string }>(
      "SELECT current_setting('synchronous_commit') AS value",
    );
    expect(rows).toEqual([{ value: 'on' }]);
  });
});
