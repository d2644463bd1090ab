import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import { type App, type AppOverrides, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { createArgon2Hasher } from '../../src/adapters/argon2-hasher.js';
import type { PasswordHasher } from '../../src/domain/passwords/password-hasher.js';
import { FakeClock } from './clock.js';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './databases.js';
import { DeclaredResponses } from './declared-responses.js';
import { sharedCompilers } from './schema-compilers.js';

let fastHasher: Promise<PasswordHasher> | undefined;

/** Real argon2id, with parameters far below production so suites stay quick. */
export function testHasher(): Promise<PasswordHasher> {
  fastHasher ??= createArgon2Hasher({
    memoryKib: 1024,
    iterations: 1,
    parallelism: 1,
    pepper: 'test-pepper',
    concurrency: 4,
  });
  return fastHasher;
}

/** The shortcuts every test app offers on top of the built app. */
export interface AppShortcuts {
  /** A service token holding exactly these grants. */
  token(...grants: string[]): Promise<string>;
  /** Shorthand for a JSON request with a bearer token. */
  call(
    method: InjectOptions['method'],
    url: string,
    token: string | null,
    body?: unknown,
  ): Promise<LightMyRequestResponse>;
}

export interface TestApp extends App, AppShortcuts {
  db: TestDatabase;
  clock: FakeClock;
  inject(options: InjectOptions): Promise<LightMyRequestResponse>;
}

/** The configuration of a test app on `databaseUrl`: quiet, quick flushes, test pepper. */
export function testConfig(databaseUrl: string, env: Record<string, string>): Config {
  return loadConfig({
    SERVICE_DATABASE_URL: databaseUrl,
    SERVICE_PASSWORD_PEPPER: 'test-pepper',
    SERVICE_ENCRYPTION_KEY: 'test-encryption-key',
    SERVICE_LOG_LEVEL: 'silent',
    SERVICE_AUDIT_FLUSH_MS: '5',
    ...env,
  });
}

/** `call` for `app`: injects a JSON request, with a bearer header when a token is given. */
export function bearerCall(app: FastifyInstance): AppShortcuts['call'] {
  return (method, url, token, body) =>
    app.inject({
      method,
      url,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      ...(body === undefined ? {} : { payload: body as object }),
    });
}

/**
 * A whole Tessera on a fresh database: real storage, real HTTP handling via inject.
 * `overrides.hasher` replaces the test hasher (a wrapper around it, say).
 */
export async function createTestApp(
  kind: DatabaseKind,
  env: Record<string, string> = {},
  existing?: TestDatabase,
  logger?: Logger,
  overrides: Pick<AppOverrides, 'hasher'> = {},
): Promise<TestApp> {
  const db = existing ?? (await createTestDatabase(kind));
  const config = testConfig(db.databaseUrl, env);
  const clock = new FakeClock();
  const store = db.open({ timeoutMs: config.dbTimeoutMs });
  await store.migrate();
  const declared = new DeclaredResponses();
  const built = await buildApp(
    config,
    {
      store,
      clock,
      hasher: overrides.hasher ?? (await testHasher()),
      instrument: declared.install,
      compilersFactory: sharedCompilers,
    },
    logger,
  );
  let counter = 0;
  const app: FastifyInstance = built.app;
  return {
    ...built,
    db,
    clock,
    inject: (options) => app.inject(options),
    async token(...grants) {
      counter += 1;
      const created = await createServiceToken(
        built.deps,
        { service_name: 'test', service_id: null },
        { name: `svc-${counter}`, grants },
      );
      return created.token;
    },
    call: bearerCall(app),
    async close() {
      await built.close();
      if (!existing) await db.drop();
      declared.assertAllDeclared();
    },
  };
}
