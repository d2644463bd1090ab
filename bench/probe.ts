/**
 * In-process cost probe: the real app on a fresh SQLite file (or, with `--db postgres`, a
 * fresh PostgreSQL database beside SERVICE_BENCH_DATABASE_URL's), driven with `app.inject` (no
 * sockets, no load generator), reporting main-thread CPU per request as the median of
 * 1,000-request batches. Request kinds alternate batch by batch, so a noisy neighbour slows
 * all of them alike; on a VM with CPU steal this separates a few microseconds where the
 * load bench cannot. It sizes parts of a request by switching them off (`--without`), and
 * `--sql` adds the time spent in each SQL statement (on PostgreSQL, from sending it to its
 * answer: the round trip, the server's work included).
 *
 * Login runs with a verifier that accepts at once: it measures everything but argon2.
 * The figures include light-my-request's own overhead, so compare them with each other,
 * not with the load bench. Wall time per request is printed too: it includes what is not
 * CPU, such as the fsync of each commit under SERVICE_SQLITE_SYNCHRONOUS=full (the probe
 * reads SERVICE_* settings from its environment).
 *
 * `--access-log` turns SERVICE_ACCESS_LOG on (at level info): its lines go to standard
 * output, so pipe the probe through `grep cpuMicrosPerRequest` for the figures.
 *
 * Options: `npm run bench:probe -- --help`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { PasswordHasher } from '../src/domain/passwords/password-hasher.js';
import { createServiceToken } from '../src/domain/service-tokens/service-token-service.js';
import { hashToken } from '../src/lib/tokens.js';
import { BENCH_PASSWORD, sessionToken, username } from './lib/data.js';
import { SMALL_SHAPE, freshPostgresDatabase, serviceEnv } from './lib/databases.js';
import { BENCH_POSTGRES_URL } from './lib/options.js';
import { seedDatabase } from './lib/seed.js';

const BATCH = 1_000;
const DISCARDED_BATCHES = 5;
const KINDS = ['whoami', 'verify', 'login', 'link', 'password', 'revoke'] as const;
/** Returning users of the link kind, created (201) before the measurement. */
const LINK_SUBJECTS = 1_000;
type Kind = (typeof KINDS)[number];

const USAGE = `Usage: npm run bench:probe -- [--only ${KINDS.join(',')}]
         [--db sqlite|postgres] [--batches 30] [--without audit,service-token] [--sql]
         [--access-log]`;

/** The options, or the usage and exit status 2 for any it cannot run (0 for --help). */
function parseOptions() {
  try {
    const { values } = parseArgs({
      options: {
        only: { type: 'string', default: KINDS.join(',') },
        batches: { type: 'string', default: '30' },
        without: { type: 'string', default: '' },
        sql: { type: 'boolean', default: false },
        db: { type: 'string', default: 'sqlite' },
        'access-log': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    const unknown = values.only.split(',').filter((k) => !(KINDS as readonly string[]).includes(k));
    if (unknown.length > 0) throw new Error(`--only: unknown kind ${unknown.join(', ')}`);
    if (!['sqlite', 'postgres'].includes(values.db)) throw new Error('--db: sqlite or postgres');
    if (!(Number(values.batches) > 0)) throw new Error('--batches: a positive number');
    return values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const values = parseOptions();
const kinds = values.only.split(',') as Kind[];
const batches = Math.max(DISCARDED_BATCHES + 1, Number(values.batches));
const without = new Set(values.without.split(',').filter(Boolean));
/** Sessions of their own for the revoke kind, each revoked once, after the shared ones. */
const revokedSessions = kinds.includes('revoke') ? batches * BATCH : 0;

const sqlTime = new Map<string, { calls: number; ns: number }>();
if (values.sql) {
  if (values.db === 'postgres') timeEveryPostgresQuery();
  else timeEveryStatement();
}

const dir = mkdtempSync(join(tmpdir(), 'tessera-probe-'));
const { url, drop } =
  values.db === 'postgres'
    ? await freshPostgresDatabase(BENCH_POSTGRES_URL)
    : { url: join(dir, 'probe.db'), drop: async () => undefined };
const acceptAll: PasswordHasher = {
  hash: async () => 'not-a-hash',
  verify: async () => true,
  verifyDummy: async () => false,
  foreignScheme: () => null,
  // No pepper to speak of: the probe's hashes are never stale, so never rehashed.
  pepperOf: () => null,
  peppers: { current: 'probe', previous: [] },
};
const accessLog = values['access-log']
  ? { SERVICE_ACCESS_LOG: 'on', SERVICE_LOG_LEVEL: 'info' }
  : {};
const config = loadConfig({ ...serviceEnv(url, dir), ...accessLog });
const { app, deps, close } = await buildApp(config, { hasher: acceptAll });
try {
  await deps.store.migrate();
  await seedDatabase(url, {
    ...SMALL_SHAPE,
    sessions: SMALL_SHAPE.sessions + revokedSessions,
  });
  const { token: serviceToken } = await createServiceToken(
    deps,
    { service_name: 'cli', service_id: null },
    { name: 'probe', grants: ['introspect', 'external_auth', 'direct_auth', 'revoke'] },
  );
  if (without.has('audit')) deps.audit.enqueue = () => undefined;
  if (without.has('service-token')) {
    // The one lookup result, reused: sizes the lookup, never a design to ship.
    const lookup = deps.store.findServiceTokenByHash.bind(deps.store);
    const first = await lookup(hashToken(serviceToken));
    deps.store.findServiceTokenByHash = async () => first;
  }

  const signIn = async (subject: number, seed?: { username: string; display_name: string }) =>
    app.inject({
      method: 'POST',
      url: '/v1/authenticate/link',
      headers: { authorization: `Bearer ${serviceToken}` },
      payload: { provider: 'probe', subject: `subject-${subject}`, ...(seed ? { seed } : {}) },
    });
  if (kinds.includes('link')) {
    for (let i = 0; i < LINK_SUBJECTS; i++) {
      expectStatus(await signIn(i, { username: `linked${i}`, display_name: 'Linked' }), 201);
    }
  }

  let next = 0;
  let revoked = 0;
  const token = () => sessionToken(next++ % SMALL_SHAPE.sessions);
  const send: Record<Kind, () => Promise<void>> = {
    whoami: async () =>
      expectStatus(
        await app.inject({
          method: 'GET',
          url: '/v1/whoami',
          headers: { cookie: `service_session=${token()}` },
        }),
      ),
    verify: async () =>
      expectStatus(
        await app.inject({
          method: 'POST',
          url: '/v1/sessions/verify',
          headers: { authorization: `Bearer ${serviceToken}` },
          payload: { token: token() },
        }),
      ),
    login: async () => {
      const started = await app.inject({
        method: 'GET',
        url: '/v1/login',
        headers: { accept: 'application/json' },
      });
      expectStatus(started);
      const flow = started.json<{ id: string; csrf_token: string }>();
      expectStatus(
        await app.inject({
          method: 'POST',
          url: `/v1/flows/${flow.id}/password`,
          headers: { accept: 'application/json' },
          payload: {
            username: username(next++ % SMALL_SHAPE.identities),
            password: BENCH_PASSWORD,
            csrf_token: flow.csrf_token,
          },
        }),
      );
    },
    link: async () => expectStatus(await signIn(next++ % LINK_SUBJECTS)),
    password: async () =>
      expectStatus(
        await app.inject({
          method: 'POST',
          url: '/v1/authenticate/password',
          headers: { authorization: `Bearer ${serviceToken}` },
          payload: {
            username: username(next++ % SMALL_SHAPE.identities),
            password: BENCH_PASSWORD,
          },
        }),
      ),
    revoke: async () =>
      expectStatus(
        await app.inject({
          method: 'POST',
          url: '/v1/sessions/revoke',
          headers: { authorization: `Bearer ${serviceToken}` },
          payload: { token: sessionToken(SMALL_SHAPE.sessions + revoked++) },
        }),
        204,
      ),
  };

  const samples = new Map<Kind, number[]>(kinds.map((kind) => [kind, []]));
  const wall = new Map<Kind, number[]>(kinds.map((kind) => [kind, []]));
  for (let batch = 0; batch < batches; batch++) {
    if (batch === DISCARDED_BATCHES) sqlTime.clear();
    for (const kind of kinds) {
      const before = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < BATCH; i++) await send[kind]();
      const used = process.cpuUsage(before);
      if (batch < DISCARDED_BATCHES) continue;
      samples.get(kind)!.push((used.user + used.system) / BATCH);
      wall.get(kind)!.push(((performance.now() - started) * 1000) / BATCH);
    }
  }
  const medians = (of: Map<Kind, number[]>) =>
    Object.fromEntries(
      [...of].map(([kind, values]) => [kind, Math.round(median(values) * 10) / 10]),
    );
  console.log(
    JSON.stringify({
      cpuMicrosPerRequest: medians(samples),
      wallMicrosPerRequest: medians(wall),
      without: [...without],
    }),
  );
  if (values.sql) printSqlTime((batches - DISCARDED_BATCHES) * BATCH * kinds.length);
} finally {
  await close();
  await drop();
  rmSync(dir, { recursive: true, force: true });
}

function expectStatus(response: LightMyRequestResponse, status = 200): void {
  if (response.statusCode !== status) {
    throw new Error(`${response.statusCode} ${response.body.slice(0, 200)}`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Counts one call of `sql`, started at `started` (hrtime), in sqlTime. */
function addSqlTime(sql: string, started: bigint): void {
  const entry = sqlTime.get(sql) ?? { calls: 0, ns: 0 };
  entry.calls += 1;
  entry.ns += Number(process.hrtime.bigint() - started);
  sqlTime.set(sql, entry);
}

/** Wraps better-sqlite3's statements so every run/get/all adds its time under its SQL. */
function timeEveryStatement(): void {
  const proto = BetterSqlite3.prototype as unknown as {
    prepare(this: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement;
  };
  const prepare = proto.prepare;
  proto.prepare = function (sql) {
    const statement = prepare.call(this, sql);
    for (const method of ['run', 'get', 'all'] as const) {
      const original = statement[method].bind(statement) as (...args: unknown[]) => unknown;
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
        const started = process.hrtime.bigint();
        try {
          return original(...args);
        } finally {
          addSqlTime(sql, started);
        }
      };
    }
    return statement;
  };
}

/** Wraps pg's Client.query so every statement adds the time to its answer under its SQL. */
function timeEveryPostgresQuery(): void {
  const proto = pg.Client.prototype as unknown as {
    query(this: pg.Client, query: unknown, ...rest: unknown[]): unknown;
  };
  const query = proto.query;
  proto.query = function (first, ...rest) {
    const sql = typeof first === 'string' ? first : (first as { text: string }).text;
    const started = process.hrtime.bigint();
    const add = () => addSqlTime(sql, started);
    // The store passes a callback (postgres/pool.ts); other callers get a promise.
    const callback = rest.at(-1);
    if (typeof callback === 'function') {
      rest[rest.length - 1] = (...answer: unknown[]) => {
        add();
        return (callback as (...args: unknown[]) => unknown)(...answer);
      };
    }
    const result = query.call(this, first, ...rest);
    if (result instanceof Promise) void result.then(add, add);
    return result;
  };
}

function printSqlTime(requests: number): void {
  const rows = [...sqlTime].sort((a, b) => b[1].ns - a[1].ns).slice(0, 15);
  console.log('µs per probed request | calls per request | µs per call | statement');
  for (const [sql, { calls, ns }] of rows) {
    const perRequest = (ns / 1000 / requests).toFixed(1);
    const perCall = (ns / 1000 / calls).toFixed(1);
    console.log(
      `${perRequest} | ${(calls / requests).toFixed(2)} | ${perCall} | ${sql.slice(0, 100)}`,
    );
  }
}
