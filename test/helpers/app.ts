import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Logger } from 'pino';
import { type App, type AppOverrides, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { createServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { randomBytes } from 'node:crypto';
import { createArgon2Hasher } from '../../src/adapters/argon2-hasher.js';
import { generateSigningKey } from '../../src/adapters/oidc-signing-key.js';
import type { GeneratedKey } from '../../src/domain/oidc/signing-keys.js';
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

const SIGNING_KEY_POOL = 3;
const signingKeys: GeneratedKey[] = [];
let signingKeysHanded = 0;

/**
 * The OpenID provider's signing keys for in-process apps: an RSA-2048 key pair takes
 * 0.4-0.6 s of CPU on a 2-core machine and the OIDC suites made 28. The first three are
 * made by the real adapter, then handed out again in turn, each time under a fresh kid, so
 * the keys one app makes in a row (a first start, then rotations) still differ.
 */
function testSigningKey(): GeneratedKey {
  const turn = signingKeysHanded++;
  if (signingKeys.length < SIGNING_KEY_POOL) {
    const made = generateSigningKey();
    signingKeys.push(made);
    return made;
  }
  const base = signingKeys[turn % SIGNING_KEY_POOL]!;
  const kid = randomBytes(12).toString('base64url');
  return {
    ...base,
    kid,
    publicJwk: { ...base.publicJwk, kid },
    privateJwk: { ...base.privateJwk, kid },
  };
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
      generateSigningKey: testSigningKey,
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
