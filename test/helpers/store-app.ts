import { type App, buildApp } from '../../src/app.js';
import { createServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import type { Store } from '../../src/domain/store.js';
import type { StoreHandle } from '../../src/storage/store.js';
import {
  type AppShortcuts,
  bearerCall,
  createTestApp,
  type TestApp,
  testConfig,
  testHasher,
} from './app.js';
import { FakeClock } from './clock.js';
import { testActor, uniqueName } from './core.js';
import { createTestDatabase, type DatabaseKind } from './databases.js';
import { DeclaredResponses } from './declared-responses.js';

export interface StoreApp extends App, AppShortcuts {
  clock: FakeClock;
}

/**
 * A whole Tessera over a store the test built itself (a proxied connection, a wrapped
 * store). The store must be migrated; closing the app closes it.
 */
export async function appOnStore(
  store: StoreHandle,
  env: Record<string, string> = {},
): Promise<StoreApp> {
  const databaseUrl = store.dialect === 'postgres' ? 'postgres://unused' : ':memory:';
  const config = testConfig(databaseUrl, env);
  const clock = new FakeClock();
  const declared = new DeclaredResponses();
  const built = await buildApp(config, {
    store,
    clock,
    hasher: await testHasher(),
    instrument: declared.install,
  });
  return {
    ...built,
    clock,
    async close() {
      await built.close();
      declared.assertAllDeclared();
    },
    async token(...grants) {
      const name = uniqueName('svc');
      return (await createServiceToken(built.deps, testActor, { name, grants })).token;
    },
    call: bearerCall(built.app),
  };
}

/** Two apps on one fresh database: a normal one, and one whose store `alter` wrapped. */
export interface AppsSharingDatabase {
  healthy: TestApp;
  altered: StoreApp;
  /** Closes both apps, then drops the database. */
  close(): Promise<void>;
}

export async function appsSharingDatabase(
  kind: DatabaseKind,
  alter: (store: StoreHandle) => StoreHandle,
): Promise<AppsSharingDatabase> {
  const db = await createTestDatabase(kind);
  const store = db.open();
  await store.migrate();
  const healthy = await createTestApp(kind, {}, db);
  const altered = await appOnStore(alter(store));
  return {
    healthy,
    altered,
    async close() {
      await altered.close();
      await healthy.close();
      await db.drop();
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
