import { createHash } from 'node:crypto';

/** Distinct statements given a name; any beyond run unnamed, as before. */
const MAX_NAMED = 512;
/** Longer texts (multi-row batches) are rare and mostly unique: not worth a name. */
const MAX_NAMED_SQL_LENGTH = 4096;

/**
 * Names for the statements Kysely compiles, so that PostgreSQL parses and plans each one
 * once per connection (pg sends a named statement's Parse only the first time on a
 * connection) instead of on every execution: the PostgreSQL counterpart of SQLite's
 * statement cache (sqlite/statement-cache.ts). The name is a digest of the text, so every
 * connection and every instance gives one text the same name and never two texts one name.
 *
 * Left unnamed:
 * - statements without parameters: transaction control and the migrations' DDL, which
 *   may hold several statements in one text (the extended protocol takes one);
 * - a text that reads `*`: its prepared plan fixes the result's columns, and after a
 *   migration adds one (another instance upgrading first) PostgreSQL refuses to run it
 *   ("cached plan must not change result type"). Statements that name their columns are
 *   re-planned by the server after a schema change;
 * - texts past MAX_NAMED_SQL_LENGTH, and every new text once MAX_NAMED have a name, so the
 *   server keeps a bounded number of plans per connection.
 */
export function statementNames(): (sql: string, parameterCount: number) => string | undefined {
  const names = new Map<string, string>();
  return (sql, parameterCount) => {
    if (parameterCount === 0) return undefined;
    const known = names.get(sql);
    if (known !== undefined || names.size >= MAX_NAMED) return known;
    if (sql.length > MAX_NAMED_SQL_LENGTH || sql.includes('*')) return undefined;
    const name = `tessera_${createHash('sha256').update(sql).digest('base64url').slice(0, 32)}`;
    names.set(sql, name);
    return name;
  };
}
