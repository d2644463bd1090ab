import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, postgresUrl } from '../helpers/databases.js';
import { newPair, newSeed } from './helpers.js';
import { cliJson } from '../helpers/cli.js';
import { type LoggingServe, startServe } from '../helpers/serve.js';

const RACERS = 50;

interface Answer {
  status: number;
  server: number;
  body: {
    created?: boolean;
    error?: string;
    session?: { identity: { id: string } };
  };
}

/**
 * The acceptance test of issue 4: two real `tessera serve` processes over one fresh
 * PostgreSQL database, 50 concurrent first sign-ins alternating between them. Only the
 * database can settle this race: the processes share nothing else.
 */
function twoProcessSuite(): void {
  const database = `tessera_links_${randomBytes(6).toString('hex')}`;
  let databaseUrl = '';
  let dataDir = '';
  let env: Record<string, string> = {};
  let servers: LoggingServe[] = [];
  let token = '';

  async function query<T extends pg.QueryResultRow>(sql: string, url = databaseUrl) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(sql)).rows;
    } finally {
      await client.end();
    }
  }
  const count = async (table: string) =>
    Number((await query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]!.n);

  beforeAll(async () => {
    const url = new URL(postgresUrl);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
    dataDir = mkdtempSync(join(tmpdir(), 'tessera-links-race-'));
    env = {
      SERVICE_DATABASE_URL: databaseUrl,
      SERVICE_PASSWORD_PEPPER: 'links-race-pepper',
      SERVICE_ENCRYPTION_KEY: 'links-race-encryption-key',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_DATA_DIR: dataDir,
      SERVICE_SWEEP_INTERVAL_MINUTES: '0',
      SERVICE_DB_POOL_SIZE: '20',
    };
    await query(`CREATE DATABASE ${database}`, postgresUrl);
    // Both start on the empty database at once: the migration lock is exercised too.
    const started = await Promise.allSettled([startServe(env), startServe(env)]);
    // Keep whichever did start, so afterAll stops it even when its twin failed.
    servers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    const created = await cliJson<{ token: string }>(
      ['svc', 'create', '--name', 'links-race', '--grant', 'external_auth'],
      env,
    );
    token = created.token;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`, postgresUrl);
  }, 60_000);

  /** Sends every body at once, the i-th to server i % 2. */
  async function race(bodies: unknown[]): Promise<Answer[]> {
    return Promise.all(
      bodies.map(async (body, i) => {
        const server = i % 2;
        const res = await fetch(`${servers[server]!.url}/v1/authenticate/link`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, server, body: (await res.json()) as Answer['body'] };
      }),
    );
  }

  function expectOneIdentity(answers: Answer[]): string {
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(RACERS - 1).fill(200), 201]);
    expect(answers.filter((answer) => answer.body.created === true)).toHaveLength(1);
    const ids = new Set(answers.map((answer) => answer.body.session?.identity.id));
    expect(ids.size).toBe(1);
    // The process that did not create the identity resolved all its calls to it.
    const winner = answers.find((answer) => answer.body.created === true)!;
    const other = answers.filter((answer) => answer.server !== winner.server);
    expect(other.map((answer) => answer.status)).toEqual(Array(RACERS / 2).fill(200));
    return [...ids][0]!;
  }

  it(`${RACERS} first sign-ins with one seed, split over two processes: one identity`, async () => {
    const identities = await count('identities');
    const pair = newPair();
    const seed = newSeed();
    const id = expectOneIdentity(await race(Array(RACERS).fill({ ...pair, seed })));
    expect(await count('identities')).toBe(identities + 1);
    const links = await query<{ identity_id: string; verified: boolean }>(
      `SELECT identity_id, verified_at IS NOT NULL AS verified FROM links WHERE subject = '${pair.subject}'`,
    );
    expect(links).toEqual([{ identity_id: id, verified: true }]);
  });

  it.each([1, 2, 3])(
    `${RACERS} first sign-ins with ${RACERS} different seeds (round %i): one identity`,
    async () => {
      const identities = await count('identities');
      const pair = newPair();
      const bodies = Array.from({ length: RACERS }, () => ({ ...pair, seed: newSeed() }));
      expectOneIdentity(await race(bodies));
      expect(await count('identities')).toBe(identities + 1);
    },
  );

  it(`${RACERS} new pairs wanting one username over two processes: one 201, the rest 409`, async () => {
    const identities = await count('identities');
    const seed = newSeed();
    const answers = await race(Array.from({ length: RACERS }, () => ({ ...newPair(), seed })));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, ...Array(RACERS - 1).fill(409)]);
    const refused = answers.filter((answer) => answer.status === 409);
    expect(refused.map((answer) => answer.body)).toEqual(
      Array(RACERS - 1).fill({ error: 'username_taken' }),
    );
    expect(await count('identities')).toBe(identities + 1);
  });

  it('every call left its session and its audit row; both processes stop cleanly', async () => {
    const created = await count('identities');
    expect(await count('links')).toBe(created);
    // Four rounds minted a session per call; the username round minted one.
    expect(await count('sessions')).toBe(4 * RACERS + 1);
    // A graceful stop flushes the buffered rows of the refused calls.
    expect(await Promise.all(servers.map((server) => server.stop()))).toEqual([0, 0]);
    const rows = await query<{ outcome: string; n: string }>(
      `SELECT outcome, COUNT(*) AS n FROM audit_log WHERE action = 'authenticate_link' GROUP BY outcome ORDER BY outcome`,
    );
    expect(rows.map((row) => [row.outcome, Number(row.n)])).toEqual([
      ['ok', 4 * RACERS + 1],
      ['username_taken', RACERS - 1],
    ]);
    const output = servers.map((server) => server.stdout() + server.stderr()).join('');
    expect(output).not.toMatch(/unhandled error/);
  });
}

if (postgresAvailable)
  describe('link race across two server processes [postgres]', twoProcessSuite);
else
  describe.skip(
    'link race across two server processes [postgres] (skipped: SERVICE_TEST_DATABASE_URL not set)',
    twoProcessSuite,
  );
