import pg from 'pg';
import { StorageUnavailable } from '../errors.js';
import { connectFailureMessage } from '../postgres/errors.js';
import { type CopyEndpoint, type Row, quoteName } from './endpoint.js';

/** BIGINT (INT8) columns hold epoch milliseconds and counters: numbers, as the store reads them. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * PostgreSQL, on one client of the command's own: a copy is one long transaction, so no
 * statement_timeout applies (the service's pool sets one per statement). The schema is
 * the connection's search_path, as for the service (`?options=-c search_path=…`).
 */
export async function postgresEndpoint(
  connectionString: string,
  connectTimeoutMs: number,
): Promise<CopyEndpoint> {
  const client = new pg.Client({
    connectionString,
    connectionTimeoutMillis: connectTimeoutMs,
    types,
  });
  // An 'error' after connecting (the server went away) fails the statement in flight;
  // without a listener it would also crash the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    throw new StorageUnavailable(
      error,
      connectFailureMessage(`${client.host}:${client.port}`, error),
    );
  }
  const query = async (text: string, values?: unknown[]) =>
    client.query({ text, values, rowMode: 'array' });

  return {
    dialect: 'postgres',
    async tables() {
      const { rows } = await query(
        `SELECT table_name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
          ORDER BY table_name COLLATE "C"`,
      );
      return rows.map((row) => row[0] as string);
    },
    async columns(table) {
      const { rows } = await query(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = $1
          ORDER BY ordinal_position`,
        [table],
      );
      return rows.map((row) => row[0] as string);
    },
    async count(table) {
      const { rows } = await query(`SELECT COUNT(*) FROM ${quoteName(table)}`);
      return rows[0]![0] as number;
    },
    async *batches(table, columns, size) {
      // A cursor, inside the caller's transaction: a large table never sits in memory.
      await query(
        `DECLARE tessera_copy NO SCROLL CURSOR FOR SELECT ${columns.map(quoteName).join(', ')} FROM ${quoteName(table)}`,
      );
      try {
        for (;;) {
          const { rows } = await query(`FETCH FORWARD ${size} FROM tessera_copy`);
          if (rows.length > 0) yield rows as Row[];
          if (rows.length < size) return;
        }
      } finally {
        await query('CLOSE tessera_copy');
      }
    },
    async insert(table, columns, rows) {
      if (rows.length === 0) return;
      let n = 0;
      const tuples = rows.map(() => `(${columns.map(() => `$${++n}`).join(', ')})`);
      await query(
        `INSERT INTO ${quoteName(table)} (${columns.map(quoteName).join(', ')}) VALUES ${tuples.join(', ')}`,
        rows.flat(),
      );
    },
    async transaction(mode, work) {
      await query(
        mode === 'snapshot' ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN',
      );
      try {
        const result = await work();
        await query('COMMIT');
        return result;
      } catch (error) {
        await query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    },
    async close() {
      await client.end();
    },
  };
}
