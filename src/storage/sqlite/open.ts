import {
  accessSync,
  closeSync,
  constants,
  fchmodSync,
  mkdirSync,
  openSync,
  realpathSync,
} from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { StorageUnavailable } from '../errors.js';
import { migrations } from '../migrations.js';
import type { Database } from '../schema.js';
import { createStore, type Store, type StoreHandle } from '../store.js';
import { sqliteAuditBatch } from './audit-batch.js';
import { whenNotBusy } from './busy.js';
import { checkpointInWorker } from './checkpointer.js';
import { sqliteDialect } from './driver.js';
import { translateSqliteError } from './errors.js';
import { sqliteOidcWrites } from './oidc-writes.js';
import { sqlitePreparedReads } from './prepared-reads.js';
import { sqliteSignInStatements } from './sign-in-statements.js';
import { withStatementCache } from './statement-cache.js';
import { sqliteUnsyncedWrites } from './unsynced-writes.js';
import { walSync } from './wal-sync.js';

export interface SqliteOptions {
  /** A file path, or `:memory:` for tests. */
  filename: string;
  /** How long a statement waits for another process's write lock before it times out. */
  busyTimeoutMs: number;
  /**
   * `full` syncs the WAL at every commit: a commit survives a power loss or an OS crash.
   * `normal` syncs only at checkpoints: it survives a killed process, not a power loss.
   */
  synchronous: 'normal' | 'full';
  /**
   * Present for a long-running server: checkpoints run on a worker thread
   * (checkpointer.ts), and `onFailure` hears when they had to come back to this one.
   * Absent (CLI commands, tests that open the store briefly): SQLite's automatic checkpoint.
   */
  checkpointer?: { onFailure(error: unknown): void };
}

/** How often the worker checkpoints the WAL (checkpointer.ts says why a timer). */
const CHECKPOINT_INTERVAL_MS = 1000;

export function openSqlite(options: SqliteOptions): StoreHandle {
  const timeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs));
  const { raw, wal } = openConnection(options.filename, timeoutMs);
  // In WAL mode a commit does not fsync on the server's thread (SQLite's automatic
  // checkpoints do; `tessera serve` runs its checkpoints on a worker: checkpointer.ts):
  // under `full` a writer is answered after wal-sync.ts has synced the WAL off the thread,
  // which is what FULL would add here. A database that cannot be in WAL mode (`:memory:`)
  // keeps SQLite's own level.
  raw.pragma(`synchronous = ${options.synchronous === 'full' && !wal ? 'FULL' : 'NORMAL'}`);
  raw.pragma('foreign_keys = ON');
  // From here on SQLite never sleeps inside a call (that would freeze the event loop):
  // a busy database fails at once and busy.ts waits on timers.
  raw.pragma('busy_timeout = 0');
  const { prepare } = withStatementCache(raw);
  // SQLite names the WAL after the database file with symbolic links resolved.
  const file = options.filename === ':memory:' ? undefined : realpathSync(raw.name);
  // After a failed sync the connection refuses writes (SQLITE_READONLY: 503) until restart.
  const sync =
    options.synchronous === 'full' && wal && file
      ? walSync(`${file}-wal`, () => raw.pragma('query_only = ON'))
      : undefined;
  const checkpointer =
    options.checkpointer && wal && file
      ? checkpointInWorker({
          raw,
          filename: file,
          intervalMs: CHECKPOINT_INTERVAL_MS,
          onFailure: options.checkpointer.onFailure,
        })
      : undefined;
  const durable = sync?.durable;
  const db = new Kysely<Database>({
    dialect: sqliteDialect({ raw, prepare, timeoutMs, durable }),
  });
  return {
    ...sqliteStore({ raw, db, timeoutMs, durable }),
    dialect: 'sqlite',
    migrate: async () => {
      const applied = await whenNotBusy(() => migrateSqlite(raw), timeoutMs).catch(
        (error: unknown) => {
          throw translateSqliteError(error);
        },
      );
      await durable?.();
      return applied;
    },
    async ping() {
      // A store whose WAL could not be synced takes no more writes (wal-sync.ts): not ready.
      const failure = sync?.failure();
      if (failure) throw failure;
      // A flag of the connection (set after a failed sync, or by whatever made it refuse
      // writes): reading it touches no file, yet fails on a closed connection.
      let queryOnly: unknown;
      try {
        queryOnly = raw.pragma('query_only', { simple: true });
      } catch (error) {
        throw translateSqliteError(error);
      }
      if (queryOnly) throw new StorageUnavailable(undefined, 'the SQLite connection is query-only');
      if (file) assertWritable([file, ...(wal ? [`${file}-wal`] : [])]);
    },
    async close() {
      // The worker's connection closes first, so that this one, the last, cleans the WAL up.
      await checkpointer?.close();
      await db.destroy();
      await sync?.close();
      // Kysely skips its driver's destroy when it never ran a query (a process that only
      // used the prepared reads): the file must be closed all the same.
      if (raw.open) raw.close();
    },
  };
}

/**
 * Opens the file in WAL mode; a file that cannot be opened is a StorageUnavailable naming
 * it (not a bug's internal_error). A new file is created 0600 before SQLite opens it: it
 * holds password hashes. SQLite gives the WAL and its index (-wal, -shm) the database
 * file's own mode whatever the umask, so they are 0600 too.
 */
function openConnection(
  filename: string,
  timeoutMs: number,
): { raw: BetterSqlite3.Database; wal: boolean } {
  let raw: BetterSqlite3.Database | undefined;
  try {
    if (filename !== ':memory:') createPrivately(filename);
    // Blocking waits are acceptable while opening (nothing is served yet): switching a new
    // file to WAL needs the write lock.
    raw = new BetterSqlite3(filename, { timeout: timeoutMs });
    const wal = switchToWal(raw, timeoutMs) === 'wal';
    return { raw, wal };
  } catch (error) {
    raw?.close();
    const reason = (error as { code?: unknown }).code;
    if (reason === 'SQLITE_BUSY') throw translateSqliteError(error);
    const cause = error instanceof Error ? error.message : String(error);
    throw new StorageUnavailable(error, `cannot open the SQLite database ${filename}: ${cause}`);
  }
}

/**
 * `journal_mode = WAL`, tried again on SQLITE_BUSY until `timeoutMs` has passed. Processes
 * opening a new file at once (a service and a CLI command, say) each read it, then want its
 * write lock to switch it; SQLite refuses all but one at once rather than have them wait for
 * each other (its busy timeout does not cover that deadlock), so the others try again.
 */
function switchToWal(raw: BetterSqlite3.Database, timeoutMs: number): unknown {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return raw.pragma('journal_mode = WAL', { simple: true });
    } catch (error) {
      const busy = (error as { code?: unknown }).code === 'SQLITE_BUSY';
      if (!busy || Date.now() >= deadline) throw error;
      // A blocking pause: nothing is served while the store opens.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.random() * 20);
    }
  }
}

/** Creates the file (and its directory) unless it exists; an existing file keeps its mode. */
function createPrivately(filename: string): void {
  mkdirSync(dirname(filename), { recursive: true });
  let fd: number;
  try {
    fd = openSync(filename, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  try {
    // The umask may have taken bits away from 0600 (never added any): owner read-write.
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

/**
 * Readiness on SQLite without writing anything: SQLite opens a file it may not write
 * read-only, without an error, and a file system remounted read-only refuses the writes of
 * a connection opened before. access(2) asks the kernel whether this process may write
 * each file (the database, where checkpoints write, and the WAL, where commits do), with
 * the same credentials the open used; it answers EROFS on a read-only mount, to root too.
 * One case answers 503 although writes still work: permissions taken away after the open
 * leave this connection's descriptors writable until the restart, which would then open
 * the file read-only; the instance is reported not ready at once rather than at its restart.
 */
function assertWritable(files: string[]): void {
  for (const path of files) {
    try {
      accessSync(path, constants.W_OK);
    } catch (error) {
      throw new StorageUnavailable(error, `the SQLite file ${path} cannot be written`);
    }
  }
}

/**
 * The generic (Kysely) store, with the methods SQLite answers on its raw connection
 * instead: each override is named here, and each module says why it exists.
 */
function sqliteStore(options: {
  raw: BetterSqlite3.Database;
  db: Kysely<Database>;
  timeoutMs: number;
  durable: (() => Promise<void>) | undefined;
}): Store {
  const { raw, db, timeoutMs, durable } = options;
  // A transaction's store is the generic one with a sign-in's writes and the audit rows on
  // the raw connection (`transactionWrites`, below: read once a transaction opens).
  const generic = createStore(db, () => transactionWrites);
  const reads = sqlitePreparedReads(raw, generic, timeoutMs);
  const unsynced = sqliteUnsyncedWrites({ raw, fallback: generic, timeoutMs });
  const audit = sqliteAuditBatch({ raw, fallback: generic, timeoutMs });
  const signIn = sqliteSignInStatements(raw, generic, timeoutMs);
  const oidc = sqliteOidcWrites({ raw, fallback: generic, timeoutMs, durable });
  const transactionWrites: Partial<Store> = {
    completeFlow: signIn.inTransaction.completeFlow,
    insertSession: signIn.inTransaction.insertSession,
    holdPasswordHash: signIn.inTransaction.holdPasswordHash,
    insertAuditRecords: audit.inTransaction.insertAuditRecords,
  };
  return {
    ...generic,
    findFlow: signIn.reads.findFlow,
    findIdentityByUsername: signIn.reads.findIdentityByUsername,
    findTotpFactor: signIn.reads.findTotpFactor,
    findSessionByTokenHash: reads.findSessionByTokenHash,
    findServiceTokenByHash: reads.findServiceTokenByHash,
    findCallerAndSession: reads.findCallerAndSession,
    findIdentityById: reads.findIdentityById,
    findCallerAndIdentity: reads.findCallerAndIdentity,
    findOidcModel: reads.findOidcModel,
    findOidcModelByUid: reads.findOidcModelByUid,
    findOidcClient: reads.findOidcClient,
    findOidcToken: reads.findOidcToken,
    upsertOidcModel: oidc.upsertOidcModel,
    consumeOidcModel: oidc.consumeOidcModel,
    writeOidcModels: oidc.writeOidcModels,
    hitRateLimit: unsynced.hitRateLimit,
    hitRateLimits: unsynced.hitRateLimits,
    insertFlow: unsynced.insertFlow,
    insertAuditRecords: audit.batch.insertAuditRecords,
  };
}

/**
 * BEGIN IMMEDIATE takes SQLite's write lock before reading the applied list, so a second
 * process starting at the same moment waits (whenNotBusy) and then sees everything applied.
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
