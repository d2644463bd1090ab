import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServices, consoleLog } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { cliSandbox, type CliSandbox } from '../helpers/cli.js';
import { describeOnPostgres, postgresUrl } from '../helpers/databases.js';
import { linesOf, runServe, type ServeProcess } from '../helpers/serve.js';
import { proxyToPostgres, TcpProxy } from '../helpers/tcp-proxy.js';

type Line = Record<string, unknown> & { msg?: string; level?: number };

/** Every line the process wrote, parsed: fails on the first one that is not a JSON object. */
function jsonLines(output: string): Line[] {
  return linesOf(output).map((line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`not a JSON line: ${line}`);
    }
    expect(parsed).toBeTypeOf('object');
    return parsed as Line;
  });
}

describeOnPostgres('tessera serve logs through a PostgreSQL outage', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let proxy: TcpProxy;
  let server: ServeProcess;
  let token: string;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const proxied = await proxyToPostgres();
    proxy = proxied.proxy;
    proxied.url.searchParams.set('options', `-c search_path=${schema}`);
    const env = {
      SERVICE_DATABASE_URL: proxied.url.toString(),
      SERVICE_PASSWORD_PEPPER: 'serve-logs-pepper',
      SERVICE_ENCRYPTION_KEY: 'serve-logs-encryption-key',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: '0',
      SERVICE_LOG_LEVEL: 'info',
      SERVICE_ACCESS_LOG: 'on',
      SERVICE_DB_POOL_SIZE: '4',
      SERVICE_DB_TIMEOUT_MS: '1000',
      SERVICE_AUDIT_FLUSH_MS: '20',
      SERVICE_SWEEP_INTERVAL_MINUTES: '0',
    };
    server = await runServe(env).listening;
    const services = await buildServices(loadConfig(env), consoleLog);
    try {
      const created = await createServiceToken(
        services.deps,
        { service_name: 'serve-logs-test', service_id: null },
        { name: 'reader', grants: ['identity_read'] },
      );
      token = created.token;
    } finally {
      await services.close();
    }
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await proxy?.stop();
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  const lookup = (requestId: string) =>
    fetch(`${server.url}/v1/identities?username=nobody`, {
      headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId },
    });

  it('writes only JSON lines, one per kind of failure, each request line with its id', async () => {
    // Several lookups at once leave several idle connections in the pool to be cut.
    const warm = await Promise.all([1, 2, 3, 4].map((n) => lookup(`warm-${n}`)));
    expect(warm.map((response) => response.status)).toEqual([404, 404, 404, 404]);

    await proxy.stop();
    await server.waitForLine((line) => line.includes('database connection lost'));
    const during = [];
    for (let n = 1; n <= 5; n += 1) {
      const response = await lookup(`outage-${n}`);
      expect(response.headers.get('x-request-id')).toBe(`outage-${n}`);
      during.push(response.status);
    }
    expect(during).toEqual([503, 503, 503, 503, 503]);
    // The refused lookups' audit rows cannot be written either.
    await server.waitForLine((line) => line.includes('audit rows could not be written'));

    await proxy.start();
    expect((await lookup('after')).status).toBe(404);
    expect(await server.stop()).toBe(0);

    expect(linesOf(server.stderr())).toEqual([]);
    const lines = jsonLines(server.stdout());
    const withMessage = (msg: string) => lines.filter((line) => line.msg === msg);

    // Four connections lost and five requests refused: one line each, the rest counted.
    const lost = withMessage('database connection lost');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ level: 50, err: { type: expect.any(String) } });
    const refused = withMessage('database unavailable');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 40, reqId: 'outage-1' });
    const unwritten = withMessage('audit rows could not be written');
    expect(unwritten).toHaveLength(1);
    expect(unwritten[0]).toMatchObject({
      level: 50,
      lost: 0,
      err: { message: expect.any(String) },
    });

    // The access log has every request, with the id it was sent.
    const requests = withMessage('request').map((line) => `${line.reqId} ${line.status}`);
    expect(requests.sort()).toEqual(
      [
        ...[1, 2, 3, 4].map((n) => `warm-${n} 404`),
        ...[1, 2, 3, 4, 5].map((n) => `outage-${n} 503`),
        'after 404',
      ].sort(),
    );
  }, 60_000);
});

describe('tessera serve start-up lines', () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  it('a generated pepper is announced as a JSON warning', async () => {
    const server = await runServe({
      ...box.env,
      // Empty counts as unset: the SQLite default generates one into the data directory.
      SERVICE_PASSWORD_PEPPER: '',
      SERVICE_LOG_LEVEL: 'info',
      SERVICE_PORT: '0',
      SERVICE_SWEEP_INTERVAL_MINUTES: '0',
    }).listening;
    expect(await server.stop()).toBe(0);
    expect(linesOf(server.stderr())).toEqual([]);
    const warning = jsonLines(server.stdout()).find((line) => line.level === 40);
    expect(warning?.msg).toMatch(/^SERVICE_PASSWORD_PEPPER is unset: generated one into /);
  }, 60_000);

  it('a bad setting is one line on stderr naming the variable, not a log line, and exit 2', async () => {
    const run = runServe({ ...box.env, SERVICE_PORT: 'abc', SERVICE_LOG_LEVEL: 'info' });
    expect(await run.exited).toBe(2);
    expect(run.stdout()).toBe('');
    expect(linesOf(run.stderr())).toEqual([
      'tessera: validation_error: SERVICE_PORT="abc" is invalid: expected an integer from 0 to 65535',
    ]);
  }, 60_000);
});
