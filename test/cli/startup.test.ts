import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { describeOnPostgres, postgresUrl } from '../helpers/databases.js';
import { linesOf, runServe, startServe } from '../helpers/serve.js';

/**
 * Issue 22 items 7 and 8 (docs/operations.md, "Start-up errors"): what is wrong is refused
 * with one line on standard error a person can act on, never guessed at, never a stack.
 */
describe('tessera start-up', () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  /** `tessera serve` that must not start: its exit code and its one stderr line. */
  async function failedServe(env: Record<string, string>) {
    const run = runServe({ ...box.env, SERVICE_LOG_LEVEL: 'info', ...env });
    const code = await run.exited;
    // Info lines may come first (migrations); the failure is not a log line.
    expect(run.stdout()).not.toMatch(/"level":(50|60)|"stack"/);
    const lines = linesOf(run.stderr());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^tessera: [a-z_]+: /);
    expect(lines[0]).not.toMatch(/\n\s+at |internal_error/);
    return { code, line: lines[0]! };
  }

  describe('SERVICE_DATABASE_URL with an unknown scheme is refused, not taken for a file', () => {
    it.each([
      'mysql://tessera:s3cret@db.internal/tessera',
      'postgress://tessera:s3cret@db.internal/tessera',
      'postgres:/tessera',
    ])('%s', async (url) => {
      const env = { SERVICE_DATABASE_URL: url };
      const served = await failedServe(env);
      const command = await runCli(['svc', 'list'], { ...box.env, ...env });
      expect(command.code).toBe(2);
      expect(linesOf(command.stderr)).toEqual([served.line]);
      expect(served.code).toBe(2);
      expect(served.line).toMatch(
        /^tessera: validation_error: SERVICE_DATABASE_URL="[a-z]+:…" is invalid: expected postgres:\/\/…, postgresql:\/\/…, sqlite:<path> or a file path$/,
      );
    });
  });

  describe('unknown SERVICE_* variables', () => {
    it('a CLI command warns on stderr with the closest known name, and runs', async () => {
      const result = await runCli(['svc', 'list', '--json'], {
        ...box.env,
        SERVICE_PROT: '8081',
        SERVICE_DATABASE: 'x',
        SERVICE_NOTHING_LIKE_IT: '1',
      });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual([]);
      expect(linesOf(result.stderr)).toEqual([
        'tessera: SERVICE_DATABASE is not a Tessera setting and is ignored: did you mean SERVICE_DATABASE_URL?',
        'tessera: SERVICE_NOTHING_LIKE_IT is not a Tessera setting and is ignored: the README lists every setting',
        'tessera: SERVICE_PROT is not a Tessera setting and is ignored: did you mean SERVICE_PORT?',
      ]);
    });

    it("the test suite's and the benchmarks' own variables are not warned about", async () => {
      const result = await runCli(['svc', 'list'], {
        ...box.env,
        SERVICE_TEST_DATABASE_URL: 'postgres://x@127.0.0.1/test',
        SERVICE_BENCH_DATABASE_URL: 'postgres://x@127.0.0.1/bench',
      });
      expect(result).toMatchObject({ code: 0, stderr: '' });
    });

    it('tessera serve logs the warning as a JSON line', async () => {
      const server = await startServe({ ...box.env, SERVICE_SWEEP_INTERAVL_MINUTES: '0' });
      const warning = await server.line(
        'SERVICE_SWEEP_INTERAVL_MINUTES is not a Tessera setting and is ignored: did you mean SERVICE_SWEEP_INTERVAL_MINUTES?',
      );
      expect(warning.level).toBe(40);
      expect(await server.stop()).toBe(0);
    });
  });

  it('a new SQLite database, its WAL and its index are created 0600 (they hold password hashes)', async () => {
    const dir = join(box.dir, 'private');
    const file = join(dir, 'tessera.db');
    const server = await startServe({ ...box.env, SERVICE_DATABASE_URL: file });
    try {
      // While the server runs, SQLite keeps the WAL and its index beside the file.
      const modes = ['', '-wal', '-shm'].map((suffix) => [
        suffix,
        (statSync(`${file}${suffix}`).mode & 0o777).toString(8),
      ]);
      expect(modes).toEqual([
        ['', '600'],
        ['-wal', '600'],
        ['-shm', '600'],
      ]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  describe('tessera serve that cannot start: one line on stderr, no stack, what to do', () => {
    it('a bad setting names the variable (exit 2)', async () => {
      const { code, line } = await failedServe({ SERVICE_PORT: 'abc' });
      expect(code).toBe(2);
      expect(line).toBe(
        'tessera: validation_error: SERVICE_PORT="abc" is invalid: expected an integer from 0 to 65535',
      );
    });

    describe('a port in use', () => {
      let taken: Server;
      let port: number;
      beforeAll(async () => {
        taken = createServer();
        await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
        port = (taken.address() as { port: number }).port;
      });
      afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

      it('names SERVICE_PORT and the address, and leaves no WAL behind', async () => {
        const { code, line } = await failedServe({
          SERVICE_HOST: '127.0.0.1',
          SERVICE_PORT: String(port),
        });
        expect(code).toBe(2);
        expect(line).toBe(
          `tessera: validation_error: SERVICE_PORT="${port}" cannot be used: another process listens on 127.0.0.1:${port}; stop it or choose another port`,
        );
        expect(existsSync(`${box.databaseFile}-wal`)).toBe(false);
      });
    });

    it('an address that is not this machine’s names SERVICE_HOST', async () => {
      // TEST-NET-1 (RFC 5737): never assigned to a local interface.
      const { code, line } = await failedServe({ SERVICE_HOST: '192.0.2.1', SERVICE_PORT: '0' });
      expect(code).toBe(2);
      expect(line).toMatch(
        /^tessera: validation_error: SERVICE_HOST="192\.0\.2\.1" cannot be used/,
      );
    });

    it('a directory given as the database is a refused setting, not an internal error', async () => {
      const dir = join(box.dir, 'a-directory.db');
      mkdirSync(dir, { recursive: true });
      const { code, line } = await failedServe({ SERVICE_DATABASE_URL: dir });
      expect(code).toBe(2);
      expect(line).toBe(
        `tessera: validation_error: SERVICE_DATABASE_URL=${JSON.stringify(dir)} cannot be used: ${dir} is a directory, not a SQLite file`,
      );
    });

    it('a file that is no database is unavailable, naming the file', async () => {
      const file = join(box.dir, 'notes.txt');
      writeFileSync(file, 'not a database, but some words long enough to be read as one\n');
      const { code, line } = await failedServe({ SERVICE_DATABASE_URL: file });
      expect(code).toBe(1);
      expect(line).toBe(
        `tessera: unavailable: cannot open the SQLite database ${file}: file is not a database`,
      );
    });

    it('an unreachable PostgreSQL names host and port (exit 1)', async () => {
      const { code, line } = await failedServe({
        SERVICE_DATABASE_URL: 'postgres://tessera:s3cret@127.0.0.1:1/tessera',
      });
      expect(code).toBe(1);
      expect(line).toBe(
        'tessera: unavailable: cannot reach PostgreSQL at 127.0.0.1:1: connection refused',
      );
    });
  });
});

describeOnPostgres('tessera serve on a PostgreSQL database that does not exist', () => {
  it('says to create it (createdb) or correct SERVICE_DATABASE_URL', async () => {
    const url = new URL(postgresUrl);
    url.pathname = '/tessera_no_such_database';
    const run = runServe({
      SERVICE_DATABASE_URL: url.toString(),
      SERVICE_PASSWORD_PEPPER: 'startup-pepper',
      SERVICE_ENCRYPTION_KEY: 'startup-encryption-key',
    });
    expect(await run.exited).toBe(1);
    expect(run.stdout()).toBe('');
    expect(linesOf(run.stderr())).toEqual([
      expect.stringMatching(
        /^tessera: unavailable: PostgreSQL at .* refused the connection: database "tessera_no_such_database" does not exist \(SQLSTATE 3D000\); create it \(createdb\) or correct SERVICE_DATABASE_URL$/,
      ),
    ]);
  });
});
