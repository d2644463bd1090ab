import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import { type Hold, retryWhileBusy } from './busy.js';
import { translateSqliteError } from './errors.js';

export interface SqliteDriverOptions {
  raw: BetterSqlite3.Database;
  /** How statements are prepared (the statement cache). */
  prepare(sql: string): BetterSqlite3.Statement;
  /** How long a statement or a BEGIN waits for another process's write lock. */
  timeoutMs: number;
  /**
   * Makes what was committed durable (wal-sync.ts), awaited before a write's caller is
   * answered; absent under SERVICE_SQLITE_SYNCHRONOUS=normal.
   */
  durable?: () => Promise<void>;
}

/**
 * Kysely's SQLite dialect with a driver of our own, which differs from Kysely's in two ways:
 *
 * - Transactions start with BEGIN IMMEDIATE: the write lock is taken up front, or waited
 *   for, before anything is read. A deferred BEGIN would read first and then fail at its
 *   first write with SQLITE_BUSY_SNAPSHOT (no wait possible) whenever another process
 *   wrote in between. Every transaction of the service writes.
 * - A statement or BEGIN refused with SQLITE_BUSY (another process holds the write lock;
 *   the connection's busy_timeout is 0) is retried on timers until `timeoutMs`, and the
 *   connection is given back while waiting, so the queries queued behind it (reads need no
 *   lock in WAL mode) run meanwhile instead of waiting for the lock too.
 *
 * One connection, one user at a time (a FIFO mutex), like Kysely's driver. Errors leave
 * translated into storage errors.
 */
export function sqliteDialect(options: SqliteDriverOptions): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new LockWaitingDriver(options),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

class Mutex {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  async lock(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Hands the mutex straight to the next waiter, if any. */
  unlock(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}

class LockWaitingDriver implements Driver {
  readonly #mutex = new Mutex();
  /** A write was committed (a COMMIT, or an autocommit write) since the connection was lent. */
  #committed = false;
  readonly #hold: Hold = {
    release: () => this.#mutex.unlock(),
    reacquire: () => this.#mutex.lock(),
  };
  readonly #connection: DatabaseConnection = {
    executeQuery: (query) => this.#execute(query),
    streamQuery() {
      throw new Error('streamed queries are not used on SQLite');
    },
  };

  constructor(private readonly options: SqliteDriverOptions) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#mutex.lock();
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('BEGIN IMMEDIATE'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('COMMIT'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('ROLLBACK'));
  }

  /**
   * The connection goes to the next query before the sync is awaited, so that commits
   * landing meanwhile share the next fdatasync instead of queueing behind this one.
   */
  async releaseConnection(): Promise<void> {
    const committed = this.#committed;
    this.#committed = false;
    this.#mutex.unlock();
    if (committed && this.options.durable) await this.options.durable();
  }

  /** Waits for the query in progress (and those queued) before closing the file. */
  async destroy(): Promise<void> {
    await this.#mutex.lock();
    this.options.raw.close();
  }

  async #execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return this.#run<R>(query);
    } catch (error) {
      // Inside a transaction the write lock is already ours (BEGIN IMMEDIATE): nothing
      // there is worth waiting for, and the connection must not be lent out mid-transaction.
      if (this.options.raw.inTransaction) throw translateSqliteError(error);
      return retryWhileBusy(
        error,
        () => this.#run<R>(query),
        this.options.timeoutMs,
        this.#hold,
      ).catch((last: unknown) => {
        throw translateSqliteError(last);
      });
    }
  }

  #run<R>({ sql, parameters }: CompiledQuery): QueryResult<R> {
    const statement = this.options.prepare(sql);
    if (statement.reader) {
      const rows = statement.all(parameters) as R[];
      this.#noteCommit(sql, statement);
      return { rows };
    }
    const { changes, lastInsertRowid } = statement.run(parameters);
    this.#noteCommit(sql, statement);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  /** A COMMIT, or a write (`INSERT … RETURNING` is a reader too) outside a transaction. */
  #noteCommit(sql: string, statement: BetterSqlite3.Statement): void {
    if (this.options.raw.inTransaction) return;
    // SQLite counts transaction control (BEGIN, COMMIT, ROLLBACK) as read-only.
    if (sql === 'COMMIT' || !statement.readonly) this.#committed = true;
  }
}
