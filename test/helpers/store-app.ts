import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { type App, buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import type { Store } from '../../src/domain/store.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { testHasher } from './app.js';
import { FakeClock } from './clock.js';
import { testActor, uniqueName } from './core.js';

export interface StoreApp extends App {
  clock: FakeClock;
  token(...grants: string[]): Promise<string>;
  call(
    method: InjectOptions['method'],
    url: string,
    token: string | null,
    body?: unknown,
  ): Promise<LightMyRequestResponse>;
}

/**
 * A whole Tessera over a store the test built itself (a proxied connection, a wrapped
 * store). The store must be migrated; closing the app closes it.
 */
export async function appOnStore(
  store: StoreHandle,
  env: Record<string, string> = {},
): Promise<StoreApp> {
  const config = loadConfig({
    SERVICE_DATABASE_URL: store.dialect === 'postgres' ? 'postgres://unused' : ':memory:',
    SERVICE_PASSWORD_PEPPER: 'test-pepper',
    SERVICE_LOG_LEVEL: 'silent',
    SERVICE_AUDIT_FLUSH_MS: '5',
    ...env,
  });
  const clock = new FakeClock();
  const silent = { warn: () => undefined, error: () => undefined };
  const built = await buildApp(config, { store, clock, hasher: await testHasher() }, silent);
  return {
    ...built,
    clock,
    async token(...grants) {
      const name = uniqueName('svc');
      return (await createServiceToken(built.deps, testActor, { name, grants })).token;
    },
    call(method, url, token, body) {
      return built.app.inject({
        method,
        url,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        ...(body === undefined ? {} : { payload: body as object }),
      });
    },
  };
}

/**
 * The same store, except that writing audit rows fails: inside transactions too, so a
 * mutation whose audit row cannot be written must roll back.
 */
export function withFailingAudit(handle: StoreHandle): StoreHandle {
  const wrap = (store: Store): Store => ({
    ...store,
    insertAuditRecords: async () => {
      throw new Error('audit table unavailable (test)');
    },
    transaction: (work) => store.transaction((tx) => work(wrap(tx))),
  });
  return { ...handle, ...wrap(handle) };
}

/**
 * The same store, except that the first `failures` batch inserts of audit rows outside a
 * transaction (the buffered read-path flushes) fail, as during a database outage.
 */
export function withFlakyAuditFlush(handle: StoreHandle, failures: number): StoreHandle {
  let left = failures;
  return {
    ...handle,
    async insertAuditRecords(records) {
      if (left > 0) {
        left -= 1;
        throw new Error('database briefly unavailable (test)');
      }
      return handle.insertAuditRecords(records);
    },
  };
}
