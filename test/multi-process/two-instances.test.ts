import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServices } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import { CLI_ARGS } from '../helpers/cli.js';
import { postgresAvailable, postgresUrl } from '../helpers/databases.js';

const PASSWORD = 'correct horse battery';

/** One `tessera serve` process, as an operator runs it. */
interface Instance {
  url: string;
  process: ChildProcess;
  output: string[];
}

function startInstance(env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, [...CLI_ARGS, 'serve'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tessera serve did not start:\n${output.join('')}`));
    }, 45_000);
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      output.push(chunk.toString());
      for (const line of chunk.toString().split('\n')) {
        if (!line.includes('tessera listening')) continue;
        clearTimeout(timer);
        resolve({ url: (JSON.parse(line) as { address: string }).address, process: child, output });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`tessera serve exited with ${code}:\n${output.join('')}`));
    });
  });
}

function stopInstance(instance: Instance | undefined): Promise<void> {
  if (!instance || instance.process.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    instance.process.once('exit', () => resolve());
    instance.process.kill('SIGTERM');
  });
}

async function json(response: Response): Promise<{ status: number; body: unknown }> {
  return { status: response.status, body: await response.json() };
}

interface Flow {
  id: string;
  csrf_token: string;
}

async function startFlow(instance: Instance): Promise<Flow> {
  const res = await fetch(`${instance.url}/v1/login`, { headers: { accept: 'application/json' } });
  expect(res.status).toBe(200);
  return (await res.json()) as Flow;
}

function submit(instance: Instance, flow: Flow, username: string, password: string) {
  return fetch(`${instance.url}/v1/flows/${flow.id}/password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password, csrf_token: flow.csrf_token }),
  });
}

const suite = postgresAvailable ? describe : describe.skip;
const title = postgresAvailable
  ? 'two tessera processes on one PostgreSQL'
  : 'two tessera processes on one PostgreSQL (skipped: SERVICE_TEST_DATABASE_URL not set)';

suite(title, () => {
  const schema = `mp_${randomBytes(6).toString('hex')}`;
  let a: Instance;
  let b: Instance;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    // The schema travels inside the URL, exactly as an operator could configure it.
    const separator = postgresUrl.includes('?') ? '&' : '?';
    const env = {
      SERVICE_DATABASE_URL: `${postgresUrl}${separator}options=-c%20search_path%3D${schema}`,
      SERVICE_PASSWORD_PEPPER: 'multi-process-pepper',
      SERVICE_ENCRYPTION_KEY: 'multi-process-encryption-key',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: '0',
      SERVICE_LOG_LEVEL: 'info',
      SERVICE_SWEEP_INTERVAL_MINUTES: '0',
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '4/15m',
    };
    // Started together: they also race to apply the migrations.
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);

    const services = await buildServices(loadConfig(env), {
      warn: () => undefined,
      error: () => undefined,
    });
    try {
      for (const username of ['alice', 'bob', 'carol']) {
        await registerIdentity(
          services.deps,
          { service_name: 'multi-process-test', service_id: null },
          { username, password: PASSWORD },
        );
      }
    } finally {
      await services.close();
    }
  }, 90_000);

  afterAll(async () => {
    await Promise.all([stopInstance(a), stopInstance(b)]);
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('runs as two separate processes on the test schema', async () => {
    expect(a.url).not.toBe(b.url);
    expect(a.process.pid).not.toBe(b.process.pid);
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    const { rows } = await admin.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
      [schema],
    );
    await admin.end();
    expect(rows.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(['flows', 'rate_limits', 'sessions', 'schema_migrations']),
    );
  });

  it('a flow completed on one instance cannot be replayed on the other; the session is shared', async () => {
    const flow = await startFlow(a);
    const first = await submit(a, flow, 'alice', PASSWORD);
    expect(first.status).toBe(200);
    const cookie = first.headers.getSetCookie()[0]!.split(';')[0]!;

    expect(await json(await submit(b, flow, 'alice', PASSWORD))).toEqual({
      status: 401,
      body: { error: 'invalid_token' },
    });

    const whoamiOnB = await fetch(`${b.url}/v1/whoami`, { headers: { cookie } });
    expect(whoamiOnB.status).toBe(200);
    const logoutOnB = await fetch(`${b.url}/v1/logout`, { method: 'POST', headers: { cookie } });
    expect(logoutOnB.status).toBe(204);
    expect(await json(await fetch(`${a.url}/v1/whoami`, { headers: { cookie } }))).toEqual({
      status: 401,
      body: { error: 'invalid_token' },
    });
  });

  it('of correct submissions racing on both instances exactly one completes the flow', async () => {
    const flow = await startFlow(b);
    const results = await Promise.all(
      [a, b, a, b].map((instance) => submit(instance, flow, 'carol', PASSWORD)),
    );
    const statuses = results.map((res) => res.status).sort();
    expect(statuses).toEqual([200, 401, 401, 401]);
  });

  it('a per-username limit spent on one instance holds on the other', async () => {
    for (let i = 0; i < 4; i += 1) {
      const res = await submit(a, await startFlow(a), 'bob', 'wrong password');
      expect(await json(res)).toEqual({ status: 401, body: { error: 'invalid_credentials' } });
    }
    const refused = await submit(b, await startFlow(b), 'bob', PASSWORD);
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: string; retry_after: number };
    expect(body.error).toBe('rate_limited');
    expect(body.retry_after).toBeGreaterThan(0);
    expect(refused.headers.get('retry-after')).toBe(String(body.retry_after));
    // Another user is unaffected on either instance.
    expect((await submit(b, await startFlow(b), 'alice', PASSWORD)).status).toBe(200);
  });
});
