import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrations } from '../migrations.js';
import type { Database } from '../schema.js';
import { createStore, type StoreHandle } from '../store.js';
import { translateDriverErrors } from '../translate-driver.js';
import { sqliteAuditBatch } from './audit-batch.js';
import { translateSqliteError } from './errors.js';
import { sqlitePreparedReads } from './prepared-reads.js';
import { withStatementCache } from './statement-cache.js';

export interface SqliteOptions {
  /** A file path, or `:memory:` for tests. */
  filename: string;
  /** How long a writer waits for another process's lock before the request times out. */
  busyTimeoutMs: number;
}

export function openSqlite(options: SqliteOptions): StoreHandle {
  if (options.filename !== ':memory:') mkdirSync(dirname(options.filename), { recursive: true });
  const raw = new BetterSqlite3(options.filename);
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
  const db = new Kysely<Database>({
    dialect: translateDriverErrors(
      new SqliteDialect({ database: withStatementCache(raw) }),
      translateSqliteError,
    ),
  });
  const store = createStore(db);
  return {
    ...store,
    ...sqlitePreparedReads(raw, store),
    ...sqliteAuditBatch(raw, store),
    dialect: 'sqlite',
    async migrate() {
      try {
        return migrateSqlite(raw);
      } catch (error) {
        throw translateSqliteError(error);
      }
    },
    async ping() {
      try {
        raw.prepare('SELECT 1').get();
      } catch (error) {
        throw translateSqliteError(error);
      }
    },
    close: () => db.destroy(),
  };
}

/**
 * BEGIN IMMEDIATE takes SQLite's write lock before reading the applied list, so a second
 * process starting at the same moment waits (busy_timeout) and then sees everything applied.
 */
function migrateSqlite(raw: BetterSqlite3.Database): string[] {
  const apply = raw.transaction(() => {
    raw.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)',
    );
    const done = new Set(
      raw
        .prepare('SELECT id FROM schema_migrations')
        .all()
        .map((row) => (row as { id: string }).id),
    );
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      for (const statement of migration.statements) raw.exec(statement);
      raw
        .prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)')
        .run(migration.id, Date.now());
      applied.push(migration.id);
    }
    return applied;
  });
  return apply.immediate();
}
