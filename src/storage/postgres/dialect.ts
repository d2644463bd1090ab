import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { Lease, PostgresPool } from './pool.js';
import { statementNames } from './statement-names.js';

/**
 * Kysely's PostgreSQL dialect with its connections leased from PostgresPool, so a
 * transaction whose BEGIN, COMMIT or ROLLBACK failed in an unknown way closes its
 * connection instead of returning it to the pool (Kysely's own driver always returns it).
 * Its statements are named (statement-names.ts), so each is parsed and planned once per
 * connection.
 */
export function leasedPostgresDialect(pool: PostgresPool): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createDriver: () => new LeasedDriver(pool, statementNames()),
  };
}

const COUNTS_ROWS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

class LeasedConnection implements DatabaseConnection {
  constructor(
    readonly lease: Lease,
    private readonly nameOf: NameOf,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const values = [...query.parameters];
    const name = this.nameOf(query.sql, values.length);
    const { command, rowCount, rows } = await this.lease.query(
      name === undefined ? query.sql : { name, text: query.sql, values },
      values,
    );
    return {
      rows: rows as R[],
      numAffectedRows: COUNTS_ROWS.has(command) ? BigInt(rowCount ?? 0) : undefined,
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not used by Tessera');
  }
}

type NameOf = ReturnType<typeof statementNames>;

class LeasedDriver implements Driver {
  constructor(
    private readonly pool: PostgresPool,
    private readonly nameOf: NameOf,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new LeasedConnection(await this.pool.connect(), this.nameOf);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings) {
    const modifiers = [
      settings.isolationLevel && `isolation level ${settings.isolationLevel}`,
      settings.accessMode,
    ].filter(Boolean);
    const sql = modifiers.length > 0 ? `start transaction ${modifiers.join(' ')}` : 'begin';
    await connection.executeQuery(CompiledQuery.raw(sql));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as LeasedConnection).lease.release();
  }

  destroy(): Promise<void> {
    return this.pool.end();
  }
}
