import type pg from 'pg';
import { pgDriver } from './driver.js';
import { StorageTimeout, StorageUnavailable } from '../errors.js';
import { connectFailureMessage, translatePostgresError } from './errors.js';

export interface PoolOptions {
  connectionString: string;
  /** Connect wait and server-side statement timeout, in milliseconds. */
  timeoutMs: number;
  poolSize: number;
  /** Optional schema to work in (tests isolate themselves this way). */
  schema?: string;
  onPoolError?: (error: Error) => void;
}

/**
 * The server ends a session left idle inside a transaction this long: a backstop for a
 * connection stranded mid-transaction by a path that did not discard it. Tessera's
 * transactions run their statements back to back, so the margin is for event-loop stalls.
 */
function idleInTransactionTimeoutMs(timeoutMs: number): number {
  return Math.max(10_000, 2 * timeoutMs);
}

/** A statement, as pg takes it: `rowMode: 'array'` answers rows as arrays. */
export type Statement = pg.QueryConfig | pg.QueryArrayConfig;

export interface Answer<R> {
  command: string;
  rowCount: number | null;
  rows: R[];
}

/** What a lease needs from its pool. */
interface LeaseContext {
  endpoint: string;
  readTimeoutMs: number;
  /** Clients whose connection failed (socket error or close). */
  lost: WeakSet<pg.ClientBase>;
}

/**
 * pg's pool behind the two guarantees the store relies on. Every failure leaves here as a
 * storage error chosen by where it happened (connect, read timeout, lost connection) or by
 * SQLSTATE, never by the driver's wording. And a connection whose state is unknown is
 * discarded on release, never handed to the next caller (see Lease).
 */
export class PostgresPool {
  /** host:port (or socket directory) as pg resolves it, for operators; no credentials. */
  readonly endpoint: string;
  readonly #pool: pg.Pool;
  readonly #timeoutMs: number;
  readonly #context: LeaseContext;
  /** Connected clients whose socket has not closed yet. */
  readonly #open = new Set<pg.ClientBase>();
  #ended: Promise<void> | undefined;

  constructor(options: PoolOptions) {
    const { Client, Pool } = pgDriver();
    const resolved = new Client({ connectionString: options.connectionString });
    this.endpoint = `${resolved.host}:${resolved.port}`;
    this.#timeoutMs = options.timeoutMs;
    this.#context = {
      endpoint: this.endpoint,
      // A second past statement_timeout: a slow statement is cancelled by the server first
      // (57014, 504, the connection stays usable); this fires only when nothing answers.
      readTimeoutMs: options.timeoutMs + 1000,
      lost: new WeakSet(),
    };
    this.#pool = new Pool({
      connectionString: options.connectionString,
      max: options.poolSize,
      // connect() below has its own timer of the same delay, set first so it fires first;
      // pg's then closes the hung socket or drops the queued request.
      connectionTimeoutMillis: options.timeoutMs,
      statement_timeout: options.timeoutMs,
      idle_in_transaction_session_timeout: idleInTransactionTimeoutMs(options.timeoutMs),
      options: options.schema ? `-c search_path=${options.schema}` : undefined,
    });
    // An idle client losing its server (restart, network cut) emits here; without a
    // listener the process would crash. The next query gets a fresh connection or a 503.
    this.#pool.on('error', (error) => options.onPoolError?.(error));
    const lost = this.#context.lost;
    this.#pool.on('connect', (client) => {
      // A checked-out client has no pool listener: without this one, losing its connection
      // would be an unhandled 'error' and crash the process. pg emits it (and 'end')
      // before it fails the pending statements, so the mark is set when they fail.
      client.on('error', () => lost.add(client));
      client.once('end', () => {
        lost.add(client);
        this.#open.delete(client);
      });
      this.#open.add(client);
    });
  }

  /** A connection of the caller's own until `release()`. */
  connect(): Promise<Lease> {
    return new Promise((resolve, reject) =>
      this.#acquire((error, lease) => (lease ? resolve(lease) : reject(error))),
    );
  }

  /**
   * One statement on a connection of its own, outside any transaction. Callbacks inside,
   * not async/await: this carries the session check of every request.
   */
  query<R>(statement: Statement): Promise<Answer<R>> {
    return new Promise((resolve, reject) =>
      this.#acquire((error, lease) => {
        if (!lease) return reject(error);
        lease.run<R>(statement, undefined, (failure, answer) => {
          lease.release();
          if (answer) resolve(answer);
          else reject(failure);
        });
      }),
    );
  }

  /**
   * Closes every connection, and resolves once the server has closed each session too (a
   * backend closes its socket only as it exits), so that nothing of this process is left
   * on the server; a server that does not answer is given a second at most, then left.
   * Idempotent: Kysely's destroy and the store's close both call it.
   */
  end(): Promise<void> {
    this.#ended ??= this.#close();
    return this.#ended;
  }

  async #close(): Promise<void> {
    const closed = [...this.#open].map(
      (client) => new Promise((resolve) => client.once('end', resolve)),
    );
    await this.#pool.end();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      // A healthy server closes a session in milliseconds; one that does not answer must
      // not hold up a shutdown (a container gets a few seconds in all).
      timer = setTimeout(resolve, Math.min(this.#timeoutMs, 1000)).unref();
    });
    await Promise.race([Promise.all(closed), bound]);
    clearTimeout(timer);
  }

  #acquire(callback: (error: StorageUnavailable | undefined, lease?: Lease) => void): void {
    if (this.#ended) return callback(this.#unreachable('the store is closed'));
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      callback(this.#unreachable(`no connection within ${this.#timeoutMs} ms`));
    }, this.#timeoutMs);
    this.#pool.connect((error, client, done) => {
      clearTimeout(timer);
      if (late) {
        if (client) done();
      } else if (error || !client) {
        callback(new StorageUnavailable(error, connectFailureMessage(this.endpoint, error)));
      } else {
        callback(undefined, new Lease(client, this.#context));
      }
    });
  }

  #unreachable(reason: string): StorageUnavailable {
    return new StorageUnavailable(
      undefined,
      `cannot reach PostgreSQL at ${this.endpoint}: ${reason}`,
    );
  }
}

/**
 * One checked-out connection. A connection whose state is unknown (a statement still
 * running after its read timeout, a transaction left open, a failed socket) goes back
 * closed, never to the next caller: pg would run that caller's statement after the stale
 * one, inside its transaction, and lose it when that transaction rolls back.
 */
export class Lease {
  #stateUnknown = false;
  #released = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly context: LeaseContext,
  ) {}

  query<R>(statement: string | Statement, values?: unknown[]): Promise<Answer<R>> {
    return new Promise((resolve, reject) =>
      this.run<R>(statement, values, (failure, answer) =>
        answer ? resolve(answer) : reject(failure),
      ),
    );
  }

  /**
   * `query` with a callback, called once, with either a failure (a storage error, or a
   * bug's own error) or the answer.
   */
  run<R>(
    statement: string | Statement,
    values: unknown[] | undefined,
    callback: (failure: unknown, answer?: Answer<R>) => void,
  ): void {
    const { client, context } = this;
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      this.#stateUnknown = true;
      const message = `no answer from PostgreSQL at ${context.endpoint} within ${context.readTimeoutMs} ms`;
      callback(new StorageTimeout(undefined, message));
    }, context.readTimeoutMs);
    const done = (error: Error | undefined, result: pg.QueryResult) => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      if (!error) return callback(undefined, result);
      const failure = context.lost.has(client)
        ? new StorageUnavailable(error, `lost the connection to PostgreSQL at ${context.endpoint}`)
        : translatePostgresError(error);
      // A statement error the server answered leaves the session known (idle, or in a
      // failed transaction, which release() checks); a failure of the connection or a
      // server going away (57P01, 08xxx, ...) does not.
      if (!(error instanceof pgDriver().DatabaseError) || failure instanceof StorageUnavailable) {
        this.#stateUnknown = true;
      }
      callback(failure);
    };
    try {
      if (typeof statement === 'string') client.query(statement, values ?? [], done);
      else client.query(statement as pg.QueryConfig, done);
    } catch (error) {
      // A statement pg refuses before sending (a bug): fail it like any other.
      done(error as Error, undefined as never);
    }
  }

  /**
   * Back to the pool only when the server last said the session is idle outside a
   * transaction and nothing since left that in doubt; otherwise the connection is closed
   * (the server rolls back whatever it held) and the pool opens a fresh one when needed.
   */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    const reusable = !this.#stateUnknown && this.client.getTransactionStatus() === 'I';
    this.client.release(!reusable);
  }
}
