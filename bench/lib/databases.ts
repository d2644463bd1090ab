import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  BENCH_PASSWORD,
  BENCH_PEPPER,
  type SeedShape,
  identityId,
  sampleIndices,
  sessionToken,
  username,
} from './data.js';
import type { LoadData } from './load.js';
import type { DbKind } from './options.js';
import { ROOT, cli } from './processes.js';
import { type SeedProgress, seedDatabase } from './seed.js';

export const SMALL_SHAPE: SeedShape = { identities: 2_000, sessions: 10_000 };
export const LARGE_SHAPE: SeedShape = { identities: 1_000_000, sessions: 5_000_000 };
/** Distinct tokens each session-check scenario rotates over, on every database size. */
export const TOKENS_PRESENTED = 10_000;
export const LARGE_SQLITE_FILE = join(ROOT, 'bench/.data/large.db');
export const LARGE_PG_DATABASE = 'tessera_bench_large';

/** The limits a bench must not hit: the scenarios log in thousands of times a minute. */
const UNLIMITED = '100000000/1s';

/** Environment of every service process (and CLI call) of the bench on `databaseUrl`. */
export function serviceEnv(databaseUrl: string, dataDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_DATABASE_URL: databaseUrl,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PASSWORD_PEPPER: BENCH_PEPPER,
    SERVICE_ENCRYPTION_KEY: 'bench-encryption-key',
    SERVICE_LOG_LEVEL: 'warn',
    SERVICE_RATE_LIMIT_LOGIN_IP: UNLIMITED,
    SERVICE_RATE_LIMIT_LOGIN_USERNAME: UNLIMITED,
    SERVICE_RATE_LIMIT_FLOW_CREATE_IP: UNLIMITED,
  };
}

export interface BenchDatabase {
  kind: DbKind;
  label: string;
  url: string;
  env: NodeJS.ProcessEnv;
  shape: SeedShape;
  data: LoadData;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

export async function postgresReachable(adminUrl: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function createServiceToken(env: NodeJS.ProcessEnv): Promise<string> {
  const name = `bench-${Date.now()}-${randomBytes(3).toString('hex')}`;
  const grants = ['introspect', 'identity_read', 'direct_auth', 'external_auth'];
  const out = await cli(
    ['svc', 'create', '--name', name, ...grants.flatMap((grant) => ['--grant', grant]), '--json'],
    env,
  );
  return (JSON.parse(out) as { token: string }).token;
}

function loadData(shape: SeedShape, serviceToken: string): LoadData {
  const sessions = sampleIndices(shape.sessions, TOKENS_PRESENTED, 7);
  const identities = sampleIndices(shape.identities, Math.min(shape.identities, 2_000), 11);
  return {
    tokens: sessions.map(sessionToken),
    identityIds: identities.map(identityId),
    usernames: identities.map(username),
    password: BENCH_PASSWORD,
    serviceToken,
    linkSubjects: Array.from({ length: 1_000 }, (_, k) => ({
      subject: `bench-subject-${k}`,
      username: `linkuser${k}`,
    })),
  };
}

/** A new, empty PostgreSQL database beside `adminUrl`'s, and how to drop it. */
export async function freshPostgresDatabase(
  adminUrl: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `tessera_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(adminUrl, name),
    drop: () => adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** A fresh small database (temp SQLite file, or a new PostgreSQL database), migrated and seeded. */
export async function smallDatabase(
  kind: DbKind,
  workDir: string,
  postgresUrl: string,
): Promise<BenchDatabase> {
  let url: string;
  let drop: () => Promise<void>;
  if (kind === 'sqlite') {
    mkdirSync(join(workDir, 'sqlite'), { recursive: true });
    url = join(workDir, 'sqlite', 'tessera.db');
    drop = async () => undefined;
  } else {
    ({ url, drop } = await freshPostgresDatabase(postgresUrl));
  }
  try {
    const env = serviceEnv(url, join(workDir, `data-${kind}`));
    await cli(['migrate'], env);
    await seedDatabase(url, SMALL_SHAPE);
    const data = loadData(SMALL_SHAPE, await createServiceToken(env));
    return { kind, label: `${kind} small`, url, env, shape: SMALL_SHAPE, data, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

/**
 * The large database, kept between runs (bench/.data/large.db, or the PostgreSQL database
 * tessera_bench_large): migrated by the service's CLI, then seeded, or resumed when a
 * previous seed was interrupted. Returns at once when it is complete.
 */
export async function seedLarge(
  kind: DbKind,
  workDir: string,
  postgresUrl: string,
  report: (progress: SeedProgress) => void,
): Promise<{ url: string; env: NodeJS.ProcessEnv }> {
  let url: string;
  if (kind === 'sqlite') {
    mkdirSync(join(ROOT, 'bench/.data'), { recursive: true });
    url = LARGE_SQLITE_FILE;
  } else {
    url = withDatabase(postgresUrl, LARGE_PG_DATABASE);
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
        LARGE_PG_DATABASE,
      ]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${LARGE_PG_DATABASE}`);
    } finally {
      await client.end();
    }
  }
  const env = serviceEnv(url, join(workDir, `data-${kind}-large`));
  await cli(['migrate'], env);
  await seedDatabase(url, LARGE_SHAPE, report);
  return { url, env };
}

export async function largeDatabase(
  kind: DbKind,
  workDir: string,
  postgresUrl: string,
  report: (progress: SeedProgress) => void,
): Promise<BenchDatabase> {
  const { url, env } = await seedLarge(kind, workDir, postgresUrl, report);
  const data = loadData(LARGE_SHAPE, await createServiceToken(env));
  return {
    kind,
    label: `${kind} large`,
    url,
    env,
    shape: LARGE_SHAPE,
    data,
    drop: async () => undefined,
  };
}
