import type BetterSqlite3 from 'better-sqlite3';

/** Longer statements (multi-row batches) are rare and mostly unique: not worth keeping. */
const MAX_CACHED_SQL_LENGTH = 4096;

/**
 * `prepare` for the Kysely driver (driver.ts), with the compiled statements kept: the
 * driver prepares every query it runs, and SQLite would parse and plan the same
 * text again each time. Statements are kept per SQL text, least recently used evicted
 * first. A kept statement is used only when it is not in the middle of an iteration
 * (a streamed query), otherwise a fresh one is prepared. SQLite re-prepares a kept
 * statement by itself after a schema change.
 */
export function withStatementCache(
  raw: BetterSqlite3.Database,
  capacity = 256,
): { prepare(sql: string): BetterSqlite3.Statement } {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql) {
      if (sql.length > MAX_CACHED_SQL_LENGTH) return raw.prepare(sql);
      const kept = cache.get(sql);
      if (kept) {
        if (kept.busy) return raw.prepare(sql);
        // Re-inserting marks it as the most recently used.
        cache.delete(sql);
        cache.set(sql, kept);
        return kept;
      }
      const statement = raw.prepare(sql);
      cache.set(sql, statement);
      if (cache.size > capacity) cache.delete(cache.keys().next().value!);
      return statement;
    },
  };
}
