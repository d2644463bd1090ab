import type { DatabaseConnection, Dialect, Driver, TransactionSettings } from 'kysely';

/**
 * Wraps a Kysely dialect so that every driver failure passes through `translate`
 * before anything above storage/ sees it. The original connection objects are kept
 * for the inner driver, which calls methods of its own classes on them.
 */
export function translateDriverErrors(
  dialect: Dialect,
  translate: (error: unknown) => unknown,
): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => new TranslatingDriver(dialect.createDriver(), translate),
  };
}

class TranslatingDriver implements Driver {
  readonly #originals = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly translate: (error: unknown) => unknown,
  ) {}

  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.translate(error);
    }
  }

  #original(connection: DatabaseConnection): DatabaseConnection {
    return this.#originals.get(connection) ?? connection;
  }

  init(): Promise<void> {
    return this.#guard(() => this.inner.init());
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const original = await this.#guard(() => this.inner.acquireConnection());
    const wrapped: DatabaseConnection = {
      executeQuery: (query) => this.#guard(() => original.executeQuery(query)),
      streamQuery: (query, chunkSize) => original.streamQuery(query, chunkSize),
    };
    this.#originals.set(wrapped, original);
    return wrapped;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#guard(() => this.inner.beginTransaction(this.#original(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#guard(() => this.inner.commitTransaction(this.#original(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#guard(() => this.inner.rollbackTransaction(this.#original(connection)));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(this.#original(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
