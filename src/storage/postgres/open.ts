import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { migrations } from '../migrations.js';
import type { Database } from '../schema.js';
import { createStore, type StoreHandle } from '../store.js';
import { translateDriverErrors } from '../translate-driver.js';
import { postgresAuditBatch } from './audit-batch.js';
import { translatePostgresError } from './errors.js';
import { postgresPreparedReads } from './prepared-reads.js';

// BIGINT columns hold epoch milliseconds, well inside Number's exact range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface PostgresOptions {
  connectionString: string;
  /** Statement, query and connect timeout in milliseconds. */
  timeoutMs: number;
  poolSize: number;
  /** Optional schema to work in (tests isolate themselves this way). */
  schema?: string;
  onPoolError?: (error: Error) => void;
}

/** An arbitrary constant naming Tessera's migration lock among other advisory locks. */
const MIGRATION_LOCK_KEY = 7_431_003;

export function openPostgres(options: PostgresOptions): StoreHandle {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.timeoutMs,
    statement_timeout: options.timeoutMs,
    query_timeout: options.timeoutMs + 1000,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
  });
  // An idle client losing its server (restart, network cut) emits here; without a listener
  // the process would crash. The next query gets a fresh connection or a 503.
  pool.on('error', (error) => options.onPoolError?.(error));
  // A checked-out client (one holding an open transaction) has no pool listener: losing its
  // connection would emit an unhandled 'error' and crash the process. Its pending queries
  // already fail (and become StorageUnavailable); the pool discards the client on release.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({
    dialect: translateDriverErrors(new PostgresDialect({ pool }), translatePostgresError),
  });

  async function withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient | undefined;
    try {
      client = await pool.connect();
      return await work(client);
    } catch (error) {
      throw translatePostgresError(error);
    } finally {
      client?.release();
    }
  }

  return {
    ...createStore(db),
    ...postgresPreparedReads(pool),
    ...postgresAuditBatch(pool),
    dialect: 'postgres',
    migrate: () =>
      withClient(async (client) => {
        // The transaction-scoped advisory lock makes concurrent starters queue up; the
        // second one then finds every migration recorded and applies nothing.
        await client.query('BEGIN');
        try {
          await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
          await client.query(
            'CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)',
          );
          const { rows } = await client.query<{ id: string }>('SELECT id FROM schema_migrations');
          const done = new Set(rows.map((row) => row.id));
          const applied: string[] = [];
          for (const migration of migrations) {
            if (done.has(migration.id)) continue;
            for (const statement of migration.statements) await client.query(statement);
            await client.query('INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)', [
              migration.id,
              Date.now(),
            ]);
            applied.push(migration.id);
          }
          await client.query('COMMIT');
          return applied;
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      }),
    ping: () =>
      withClient(async (client) => {
        await client.query('SELECT 1');
      }),
    close: () => db.destroy(),
  };
}
