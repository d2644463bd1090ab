import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';
import { openStorage } from '../../src/storage/open.js';
import type { StoreHandle } from '../../src/storage/store.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** Set by CI: suites listed here must run, never skip (e.g. `postgres,browser`). */
const required = new Set((process.env.TESSERA_TEST_REQUIRE ?? '').split(',').filter(Boolean));
export const postgresUrl = process.env.SERVICE_TEST_DATABASE_URL ?? '';

export function requireSuite(name: string, available: boolean, why: string): boolean {
  if (!available && required.has(name)) {
    throw new Error(`${name} suite is required (TESSERA_TEST_REQUIRE) but unavailable: ${why}`);
  }
  return available;
}

export const postgresAvailable = requireSuite(
  'postgres',
  postgresUrl !== '',
  'SERVICE_TEST_DATABASE_URL is not set',
);

/**
 * Runs `body` once per database. Without SERVICE_TEST_DATABASE_URL the PostgreSQL copy is
 * reported as skipped, by name, rather than silently missing.
 */
export function describeEachDatabase(name: string, body: (kind: DatabaseKind) => void): void {
  describe(`${name} [sqlite]`, () => body('sqlite'));
  describeOnPostgres(name, () => body('postgres'));
}

/** A PostgreSQL-only suite, `name [postgres]`: skipped by name, saying why, as above. */
export function describeOnPostgres(name: string, body: () => void): void {
  if (postgresAvailable) describe(`${name} [postgres]`, body);
  else describe.skip(`${name} [postgres] (skipped: SERVICE_TEST_DATABASE_URL not set)`, body);
}

export interface TestDatabase {
  kind: DatabaseKind;
  databaseUrl: string;
  /** PostgreSQL schema isolating this test's tables. */
  schema?: string;
  /** SQLite file (for multi-connection tests). */
  file?: string;
  open(options?: { timeoutMs?: number }): StoreHandle;
  drop(): Promise<void>;
}

/** A fresh, empty database: a temp SQLite file, or a new schema on the test PostgreSQL. */
export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  const suffix = randomBytes(6).toString('hex');
  if (kind === 'sqlite') {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'tessera-test-'));
    const file = join(dir, 'tessera.db');
    return {
      kind,
      databaseUrl: file,
      file,
      open: (options) =>
        openStorage({ databaseUrl: file, timeoutMs: options?.timeoutMs ?? 5000, poolSize: 1 }),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${suffix}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  return {
    kind,
    databaseUrl: postgresUrl,
    schema,
    open: (options) =>
      openStorage({
        databaseUrl: postgresUrl,
        timeoutMs: options?.timeoutMs ?? 5000,
        poolSize: 10,
        schema,
      }),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** A migrated store on a fresh database of `kind`; closing it also drops the database. */
export async function createMigratedStore(kind: DatabaseKind): Promise<StoreHandle> {
  const db = await createTestDatabase(kind);
  const store = db.open();
  await store.migrate();
  return {
    ...store,
    async close() {
      await store.close();
      await db.drop();
    },
  };
}
