import { isPostgresUrl, sqliteFilename } from './database-url.js';
import { openPostgres } from './postgres/open.js';
import { openSqlite } from './sqlite/open.js';
import type { StoreHandle } from './store.js';

export interface StorageConfig {
  /** `postgres://…`/`postgresql://…`, or a SQLite file path (`sqlite:` prefix optional). */
  databaseUrl: string;
  timeoutMs: number;
  poolSize: number;
  /** SQLite only: `full` makes every commit survive a power loss (docs/sqlite.md). */
  sqliteSynchronous?: 'normal' | 'full';
  schema?: string;
  onPoolError?: (error: Error) => void;
  /** SQLite only: checkpoints on a worker thread, for a long-running server (docs/sqlite.md). */
  sqliteCheckpointer?: { onFailure(error: unknown): void };
}

export { isPostgresUrl };

export function openStorage(config: StorageConfig): StoreHandle {
  if (isPostgresUrl(config.databaseUrl)) {
    return openPostgres({
      connectionString: config.databaseUrl,
      timeoutMs: config.timeoutMs,
      poolSize: config.poolSize,
      schema: config.schema,
      onPoolError: config.onPoolError,
    });
  }
  return openSqlite({
    filename: sqliteFilename(config.databaseUrl),
    busyTimeoutMs: config.timeoutMs,
    synchronous: config.sqliteSynchronous ?? 'full',
    checkpointer: config.sqliteCheckpointer,
  });
}
