import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';
import { AuditLog } from './domain/audit/audit-log.js';
import { createArgon2Hasher, type PasswordHasher } from './domain/passwords/password-hasher.js';
import type { AppDeps } from './http/deps.js';
import { buildServer } from './http/server.js';
import { type Clock, systemClock } from './lib/clock.js';
import { resolvePepper } from './pepper.js';
import { openStorage } from './storage/open.js';
import type { StoreHandle } from './storage/store.js';

export interface AppOverrides {
  store?: StoreHandle;
  clock?: Clock;
  hasher?: PasswordHasher;
  /** Database schema to work in (PostgreSQL tests isolate themselves this way). */
  schema?: string;
}

export interface Services {
  deps: AppDeps;
  /** Flushes buffered audit rows and closes the database. */
  close(): Promise<void>;
}

/** Composition root shared by the server and the CLI: no logic, only wiring. */
export async function buildServices(
  config: Config,
  log: { warn(message: string): void; error(object: unknown, message: string): void },
  overrides: AppOverrides = {},
): Promise<Services> {
  const store =
    overrides.store ??
    openStorage({
      databaseUrl: config.databaseUrl,
      timeoutMs: config.dbTimeoutMs,
      poolSize: config.dbPoolSize,
      sqliteSynchronous: config.sqliteSynchronous,
      schema: overrides.schema,
      onPoolError: (error) => log.error({ err: error }, 'database connection lost'),
    });
  const clock = overrides.clock ?? systemClock;
  try {
    const hasher =
      overrides.hasher ??
      (await createArgon2Hasher({
        ...config.argon2,
        pepper: resolvePepper(config, (message) => log.warn(message)),
        concurrency: config.hashConcurrency,
      }));
    const audit = new AuditLog(store, clock, config.auditFlushMs, (error, lost) =>
      log.error({ err: error, lost }, 'audit rows could not be written'),
    );
    const deps: AppDeps = {
      config,
      store,
      clock,
      hasher,
      audit,
      sessionTtlMs: config.sessionTtlMs,
      usernameRule: config.rateLimits.loginUsername,
    };
    return {
      deps,
      async close() {
        await audit.flush();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

export interface App {
  app: FastifyInstance;
  deps: AppDeps;
  close(): Promise<void>;
}

export async function buildApp(
  config: Config,
  overrides: AppOverrides = {},
  log = consoleLog,
): Promise<App> {
  const services = await buildServices(config, log, overrides);
  const app = await buildServer(services.deps);
  return {
    app,
    deps: services.deps,
    async close() {
      await app.close();
      await services.close();
    },
  };
}

export const consoleLog = {
  warn: (message: string) => console.warn(`tessera: ${message}`),
  error: (object: unknown, message: string) => console.error(`tessera: ${message}`, object),
};
