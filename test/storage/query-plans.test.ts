import BetterSqlite3 from 'better-sqlite3';
import { type CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.js';
import { newId } from '../../src/lib/ids.js';
import { adminQueries } from '../../src/storage/queries/admin.js';
import { sqliteReadSql } from '../../src/storage/sqlite/prepared-reads.js';
import type { Database } from '../../src/storage/schema.js';
import {
  type TestDatabase,
  createTestDatabase,
  describeEachDatabase,
} from '../helpers/databases.js';
import { T0, identityRow, sessionRow, stored } from '../helpers/records.js';

const HOUR = 3_600_000;

function auditRow(i: number, action: string, details: object): AuditRecord {
  return {
    id: newId(),
    at: T0 - (i % 168) * HOUR,
    action,
    service_name: 'backend',
    service_id: null,
    target_identity: null,
    outcome: 'ok',
    details: JSON.stringify(details),
  };
}

/** A Kysely of the test's own on `db`, recording each statement it sends, and EXPLAIN. */
function explaining(db: TestDatabase) {
  const sent: CompiledQuery[] = [];
  const log = (event: { query: CompiledQuery }) => void sent.push(event.query);
  if (db.kind === 'sqlite') {
    const raw = new BetterSqlite3(db.file!);
    return {
      sent,
      kysely: new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }), log }),
      plan: async (query: CompiledQuery) =>
        raw
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${query.sql}`)
          .all(...query.parameters)
          .map((row) => row.detail)
          .join('\n'),
    };
  }
  const pool = new pg.Pool({
    connectionString: db.databaseUrl,
    options: `-c search_path=${db.schema}`,
    max: 1,
  });
  return {
    sent,
    kysely: new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log }),
    // The plan the server keeps for a named statement once it stops planning per call
    // (statement-names.ts names this one): made without the parameters' values.
    plan: async (query: CompiledQuery) => {
      const client = await pool.connect();
      try {
        const values = query.parameters.map((value) =>
          typeof value === 'number' ? String(value) : client.escapeLiteral(String(value)),
        );
        await client.query(`SET plan_cache_mode = force_generic_plan; PREPARE q AS ${query.sql}`);
        const result = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN EXECUTE q(${values.join(', ')})`,
        );
        await client.query('DEALLOCATE q; RESET plan_cache_mode');
        return result.rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        client.release();
      }
    },
  };
}

/**
 * The overview's week of sign-ins reads the sign-ins' own partial index (migration
 * 0018_audit_sign_ins_index), never the audit rows of every service call in that week: the
 * query must spell the index's condition so that each planner can use it.
 */
describeEachDatabase('the overview counts sign-ins from their own index', (kind) => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('whatever else the audit log holds', async () => {
    const db = await createTestDatabase(kind);
    cleanup.push(() => db.drop());
    const store = db.open();
    cleanup.push(() => store.close());
    await store.migrate();
    // A busy backend's week: a hundred verifications for each sign-in.
    const rows = Array.from({ length: 3_000 }, (_, i) =>
      i % 100 === 0
        ? auditRow(i, 'login', { sign_in_method: 'password' })
        : auditRow(i, 'session_verify', { session_id: newId() }),
    );
    for (let i = 0; i < rows.length; i += 500) {
      await store.insertAuditRecords(rows.slice(i, i + 500));
    }

    const { sent, kysely, plan } = explaining(db);
    cleanup.push(() => kysely.destroy());
    // Statistics, as a database that has run a while has them.
    await sql.raw(kind === 'sqlite' ? 'ANALYZE' : 'ANALYZE audit_log').execute(kysely);
    const counted = await adminQueries(kysely).countSignIns(T0 - 7 * 24 * HOUR, HOUR, ['password']);
    expect(counted.reduce((sum, row) => sum + row.count, 0)).toBe(30);
    const query = sent.at(-1)!;
    expect(await plan(query)).toContain('audit_log_sign_ins_idx');
  });
});

/**
 * The SQLite reads of the session check and the OpenID provider write their parameters as
 * `+?` (sqlite/prepared-reads.ts): each must still find its row by key, with statistics
 * gathered as an operator's ANALYZE or `PRAGMA optimize` gathers them.
 */
describe('SQLite prepared reads', () => {
  it('search by key after ANALYZE', async () => {
    const db = await createTestDatabase('sqlite');
    const store = db.open();
    await store.migrate();
    for (let i = 0; i < 50; i++) {
      const identity = identityRow();
      await store.insertIdentity(identity);
      for (let j = 0; j < 5; j++) await store.insertSession(stored(sessionRow(identity.id)));
    }
    const raw = new BetterSqlite3(db.file!);
    raw.exec('ANALYZE');
    const { sql: reads, oidc } = sqliteReadSql();
    const texts = [
      reads.sessionCheckByTokenHash,
      reads.serviceTokenByHash,
      reads.identityById,
      reads.identityByUsername,
      reads.identityByEmail,
      oidc.modelById,
      oidc.modelByUid,
      oidc.clientById,
      oidc.tokenWithContext,
    ];
    try {
      for (const text of texts) {
        const steps = raw
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${text}`)
          .all(
            ...text
              .split('+?')
              .slice(1)
              .map(() => 'x'),
          )
          .map((row) => row.detail);
        expect(steps.length, text).toBeGreaterThan(0);
        for (const step of steps) expect(step, text).toMatch(/^SEARCH \w+ USING .*INDEX .*=\?/);
        // The provider's session by uid, alone or joined to a token, from the uid's own
        // partial index (migration 0019), not by kind alone.
        if (text === oidc.modelByUid || text === oidc.tokenWithContext) {
          expect(steps.join('\n'), text).toContain('oidc_models_uid_idx (uid=?)');
        }
      }
    } finally {
      raw.close();
      await store.close();
      await db.drop();
    }
  });
});
