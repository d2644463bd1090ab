import { hash } from '@node-rs/argon2';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { pepperId, withPepperId } from '../../src/adapters/password-hashes/peppers.js';
import {
  BENCH_PASSWORD,
  BENCH_PEPPER,
  IDENTITY_COLUMNS,
  type IdentityRow,
  SESSION_COLUMNS,
  type SeedShape,
  type SessionRow,
  identityRow,
  sessionRow,
} from './data.js';

/**
 * Bulk seeding of identities and sessions straight into a database the service has migrated.
 * Progress is committed with each transaction in `bench_seed`, a table of the bench's own, so an
 * interrupted seed resumes where it stopped. One argon2 hash (of BENCH_PASSWORD) is computed
 * once and shared by every identity.
 */

export interface SeedParams {
  shape: SeedShape;
  issuedAt: number;
  validUntil: number;
  passwordHash: string;
}

export interface SeedProgress {
  table: 'identities' | 'sessions';
  done: number;
  total: number;
  rowsPerSecond: number;
}

/**
 * Rows per committed transaction (and resume step). Large for SQLite: each commit writes
 * every page it dirtied to the WAL, and random token hashes dirty most of the index's
 * leaves, so few big commits beat many small ones.
 */
const SQLITE_ROWS_PER_TRANSACTION = 500_000;
const POSTGRES_ROWS_PER_TRANSACTION = 100_000;
const DAY_MS = 86_400_000;

export function isPostgres(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** argon2id with the service's configured parameters (SERVICE_ARGON2_*) and the bench pepper. */
export async function benchPasswordHash(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const config = loadConfig({ ...env, SERVICE_DATABASE_URL: ':memory:' });
  const phc = await hash(BENCH_PASSWORD, {
    algorithm: 2,
    memoryCost: config.argon2.memoryKib,
    timeCost: config.argon2.iterations,
    parallelism: config.argon2.parallelism,
    secret: Buffer.from(BENCH_PEPPER, 'utf8'),
  });
  // Named by its pepper's id, as the service writes its hashes (docs/password-hashing.md).
  return withPepperId(phc, pepperId(BENCH_PEPPER));
}

function freshParams(shape: SeedShape, passwordHash: string): SeedParams {
  const now = Date.now();
  // Far enough ahead that a cached seed stays valid for many runs.
  return { shape, issuedAt: now, validUntil: now + 365 * DAY_MS, passwordHash };
}

function sameShape(a: SeedShape, b: SeedShape): boolean {
  return a.identities === b.identities && a.sessions === b.sessions;
}

type Report = (progress: SeedProgress) => void;

/** Seeds `shape` into the database, resuming a previous partial seed of the same shape. */
export async function seedDatabase(
  databaseUrl: string,
  shape: SeedShape,
  report: Report = () => undefined,
): Promise<SeedParams> {
  return isPostgres(databaseUrl)
    ? seedPostgres(databaseUrl, shape, report)
    : seedSqlite(databaseUrl.replace(/^sqlite:(\/\/)?/, ''), shape, report);
}

function identityValues(row: IdentityRow): unknown[] {
  return IDENTITY_COLUMNS.map((column) => row[column]);
}

function sessionValues(row: SessionRow): unknown[] {
  return SESSION_COLUMNS.map((column) => row[column]);
}

function rowsFor(
  table: 'identities' | 'sessions',
  params: SeedParams,
): (index: number) => unknown[] {
  return table === 'identities'
    ? (i) => identityValues(identityRow(i, params.passwordHash))
    : (j) => sessionValues(sessionRow(j, params.shape, params.issuedAt, params.validUntil));
}

async function seedSqlite(file: string, shape: SeedShape, report: Report): Promise<SeedParams> {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('journal_mode = WAL');
    // A bulk load of derivable data: durability of each batch is not needed, speed is.
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -1000000');
    db.pragma('foreign_keys = OFF');
    db.exec(
      'CREATE TABLE IF NOT EXISTS bench_seed (name TEXT PRIMARY KEY, done BIGINT NOT NULL, params TEXT NOT NULL)',
    );
    const stored = db.prepare('SELECT done, params FROM bench_seed WHERE name = ?');
    const save = db.prepare(
      'INSERT INTO bench_seed (name, done, params) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET done = excluded.done',
    );
    const existing = stored.get('params') as { done: number; params: string } | undefined;
    let params: SeedParams;
    if (existing && sameShape((JSON.parse(existing.params) as SeedParams).shape, shape)) {
      params = JSON.parse(existing.params) as SeedParams;
    } else {
      if (existing) throw new Error(`${file} holds a seed of another shape; delete it first`);
      params = freshParams(shape, await benchPasswordHash());
      save.run('params', 0, JSON.stringify(params));
    }
    const paramsText = '';

    for (const table of ['identities', 'sessions'] as const) {
      const columns = table === 'identities' ? IDENTITY_COLUMNS : SESSION_COLUMNS;
      const total = table === 'identities' ? shape.identities : shape.sessions;
      const perStatement = Math.floor(30_000 / columns.length / 10) * 10;
      const tuple = `(${columns.map(() => '?').join(', ')})`;
      const sqlFor = (rows: number) =>
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array(rows).fill(tuple).join(', ')}`;
      const full = db.prepare(sqlFor(perStatement));
      const makeRow = rowsFor(table, params);
      let done = (stored.get(table) as { done: number } | undefined)?.done ?? 0;
      const started = Date.now();
      const startDone = done;
      const batch = db.transaction((from: number, to: number) => {
        for (let start = from; start < to; start += perStatement) {
          const end = Math.min(to, start + perStatement);
          const values: unknown[] = [];
          for (let i = start; i < end; i++) values.push(...makeRow(i));
          (end - start === perStatement ? full : db.prepare(sqlFor(end - start))).run(values);
        }
        save.run(table, to, paramsText);
      });
      while (done < total) {
        const to = Math.min(total, done + SQLITE_ROWS_PER_TRANSACTION);
        batch(done, to);
        done = to;
        const seconds = Math.max(0.001, (Date.now() - started) / 1000);
        report({ table, done, total, rowsPerSecond: (done - startDone) / seconds });
      }
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('ANALYZE');
    return params;
  } finally {
    db.close();
  }
}

const PG_TYPES: Record<string, string> = {
  issued_at: 'bigint',
  expires_at: 'bigint',
  revoked_at: 'bigint',
  created_at: 'bigint',
  updated_at: 'bigint',
};

async function seedPostgres(url: string, shape: SeedShape, report: Report): Promise<SeedParams> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS bench_seed (name TEXT PRIMARY KEY, done BIGINT NOT NULL, params TEXT NOT NULL)',
    );
    const read = async (name: string) =>
      (
        await client.query<{ done: string; params: string }>(
          'SELECT done, params FROM bench_seed WHERE name = $1',
          [name],
        )
      ).rows[0];
    const existing = await read('params');
    let params: SeedParams;
    if (existing && sameShape((JSON.parse(existing.params) as SeedParams).shape, shape)) {
      params = JSON.parse(existing.params) as SeedParams;
    } else {
      if (existing) throw new Error('the database holds a seed of another shape; drop it first');
      params = freshParams(shape, await benchPasswordHash());
      await client.query('INSERT INTO bench_seed (name, done, params) VALUES ($1, 0, $2)', [
        'params',
        JSON.stringify(params),
      ]);
    }
    const paramsText = '';

    for (const table of ['identities', 'sessions'] as const) {
      const columns = table === 'identities' ? IDENTITY_COLUMNS : SESSION_COLUMNS;
      const total = table === 'identities' ? shape.identities : shape.sessions;
      const perStatement = 10_000;
      // One statement per batch: each column travels as one array parameter.
      const insert = `INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${columns
        .map((column, k) => `$${k + 1}::${PG_TYPES[column] ?? 'text'}[]`)
        .join(', ')})`;
      const makeRow = rowsFor(table, params);
      let done = Number((await read(table))?.done ?? 0);
      const started = Date.now();
      const startDone = done;
      while (done < total) {
        const to = Math.min(total, done + POSTGRES_ROWS_PER_TRANSACTION);
        await client.query('BEGIN');
        try {
          for (let start = done; start < to; start += perStatement) {
            const end = Math.min(to, start + perStatement);
            const arrays: unknown[][] = columns.map(() => []);
            for (let i = start; i < end; i++) {
              makeRow(i).forEach((value, k) => arrays[k]!.push(value));
            }
            await client.query(insert, arrays);
          }
          await client.query(
            'INSERT INTO bench_seed (name, done, params) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET done = excluded.done',
            [table, to, paramsText],
          );
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
        done = to;
        const seconds = Math.max(0.001, (Date.now() - started) / 1000);
        report({ table, done, total, rowsPerSecond: (done - startDone) / seconds });
      }
    }
    await client.query('ANALYZE identities');
    await client.query('ANALYZE sessions');
    return params;
  } finally {
    await client.end();
  }
}
