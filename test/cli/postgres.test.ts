import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLI_ARGS, childEnv, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { describeOnPostgres } from '../helpers/databases.js';
import { asAdmin, createScratchDatabase, type ScratchDatabase } from '../helpers/postgres-admin.js';

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Sessions the server still has for `applicationName`. */
function sessionsOf(applicationName: string): Promise<number> {
  return asAdmin(async (admin) => {
    const { rows } = await admin.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    return rows[0]!.n;
  });
}

/**
 * Runs `tessera migrate` and, at the moment it prints its result, counts the sessions it
 * still holds on the server; then waits for it to exit.
 */
function migrate(env: Record<string, string>, applicationName: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string; open: number }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [...CLI_ARGS, 'migrate'], {
        env: childEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let open: Promise<number> | undefined;
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('\n')) open ??= sessionsOf(applicationName);
      });
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        (open ?? Promise.resolve(-1)).then(
          (n) => resolve({ code, stdout, stderr, open: n }),
          reject,
        );
      });
    },
  );
}

describeOnPostgres('tessera migrate on PostgreSQL', () => {
  let box: CliSandbox;
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    box = cliSandbox();
    scratch = await createScratchDatabase();
  });
  afterAll(async () => {
    box?.remove();
    await scratch?.drop();
  });

  // Issue 11 item 4: an idle pooled connection kept the process alive for pg's idle
  // timeout (10 s) after "database is up to date". The command now closes its pool before
  // it prints: when the line appears, the server has no session of it left.
  it('closes every connection before it reports, then exits by itself', async () => {
    for (const expected of [/^applied 0001_core/, /^database is up to date$/m]) {
      const applicationName = `tessera_migrate_${randomBytes(4).toString('hex')}`;
      const url = new URL(scratch.url);
      url.searchParams.set('application_name', applicationName);
      const result = await migrate(
        { ...box.env, SERVICE_DATABASE_URL: url.toString() },
        applicationName,
      );
      expect(result).toMatchObject({ code: 0, stderr: '', open: 0 });
      expect(result.stdout).toMatch(expected);
    }
  });
});

describeOnPostgres('start-up against an unreachable PostgreSQL', () => {
  let box: CliSandbox;
  beforeAll(() => (box = cliSandbox()));
  afterAll(() => box?.remove());

  const unreachable = async () => {
    const port = await closedPort();
    const env = {
      ...box.env,
      SERVICE_DATABASE_URL: `postgres://tessera:s3cret-pw@127.0.0.1:${port}/tessera`,
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: '0',
      SERVICE_LOG_LEVEL: 'info',
    };
    return { env, cause: `cannot reach PostgreSQL at 127.0.0.1:${port}: connection refused` };
  };

  it('tessera migrate names host, port and cause in one line, without the password', async () => {
    const { env, cause } = await unreachable();
    const result = await runCli(['migrate'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`tessera: unavailable: ${cause}\n`);
    expect(result.stdout + result.stderr).not.toContain('s3cret-pw');
  });

  // A failed start is not a log line: one line on stderr, like any command's failure.
  it('tessera serve names host, port and cause in one line on stderr, without the password', async () => {
    const { env, cause } = await unreachable();
    const result = await runCli(['serve'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`tessera: unavailable: ${cause}\n`);
    expect(result.stdout).not.toMatch(/"level":(50|60)/);
    expect(result.stdout + result.stderr).not.toContain('s3cret-pw');
  });
});
