import type { PostgresPool } from './pool.js';

/**
 * Named prepared reads on `pool` (`select`, a plain `SELECT <columns> FROM …`) that answer
 * their row as one JSON value, an array of the columns in order or an object keyed by their
 * names; undefined when no row matches.
 */
export function jsonReads(pool: PostgresPool) {
  return <Value>(
    name: string,
    select: string,
    as: 'array' | 'object',
  ): ((values: unknown[]) => Promise<Value | undefined>) => {
    const text = jsonRow(select, as);
    return async (values) =>
      (await pool.query<[Value]>({ name, text, values, rowMode: 'array' })).rows[0]?.[0];
  };
}

/**
 * `SELECT a, b FROM …` as `SELECT json_build_array(a, b) FROM …` (or json_build_object,
 * keyed by the column names): one column of type json, which pg hands to JSON.parse.
 *
 * Why: pg asks PostgreSQL to describe the result on every execution, even of a prepared
 * statement, and for every column of every answer parses a field description, looks up a
 * type parser and builds its row template again (Result.addFields: 7% of whoami's main
 * thread with 16 columns, beside the parsing of each value); one JSON text costs less
 * (the session check: 48.6 against 45.1 µs of Node's CPU per read, the access token's
 * 71.8 against 50.4: bench/README.md).
 * The values keep their types: PostgreSQL writes BIGINT and INTEGER as JSON numbers (the
 * pool parses INT8 to a number anyway; millisecond times are far below 2^53), text as
 * strings, NULL as null; a column of another type (BYTEA, a float) would not read as pg
 * reads it, and the store contract suite, which holds these reads to the Kysely ones on
 * both databases, would say so. Both functions take at most 100 arguments: the widest
 * read here, the access token's, has 46 columns.
 */
export function jsonRow(select: string, as: 'array' | 'object'): string {
  const from = select.indexOf(' FROM ');
  if (!select.startsWith('SELECT ') || from < 0) throw new Error(`not a plain SELECT: ${select}`);
  const columns = select.slice('SELECT '.length, from).split(', ');
  const values = as === 'array' ? columns : columns.flatMap((column) => [`'${column}'`, column]);
  return `SELECT json_build_${as}(${values.join(', ')})${select.slice(from)}`;
}
