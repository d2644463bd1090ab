/**
 * `tessera identity import --from auth0` on a generated Auth0 export of 1,000,000 users
 * (the bulk user export as JSON lines plus the password-hash export), through the real CLI,
 * on SQLite and/or PostgreSQL, then the same import again (all skipped). Every user has a
 * bcrypt hash (cost 4, one hash shared by all: import parses and bounds each hash but never
 * verifies one, so the figure is the import's own cost); every fourth a GitHub link. Peak
 * memory is the CLI process's maximum resident set (GNU time).
 *
 * Usage: npm run bench:import-from -- [--users 1000000] [--db sqlite|postgres|both]
 * PostgreSQL: SERVICE_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres);
 * a fresh database is created and dropped.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { hash } from '@node-rs/bcrypt';
import pg from 'pg';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '1000000' },
    db: { type: 'string', default: 'sqlite' },
  },
});
const users = Number(values.users);
const kinds = values.db === 'both' ? ['sqlite', 'postgres'] : [values.db!];
const adminUrl =
  process.env.SERVICE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROOT = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'tessera-import-from-bench-'));

/**
 * Runs the CLI under GNU time; resolves with its stdout, wall time, CPU time (user + system:
 * on a machine shared with other work, the wall time says more about the others) and peak RSS.
 */
function cli(args: string[], env: NodeJS.ProcessEnv) {
  type Run = { stdout: string; seconds: number; cpuSeconds: number; peakMib: number };
  return new Promise<Run>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(
      '/usr/bin/time',
      ['-f', '%M %U %S', process.execPath, '--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const [peakKib, user, system] = stderr.trim().split('\n').pop()!.split(' ').map(Number);
      const cpuSeconds = user! + system!;
      if (code === 0)
        resolve({ stdout, seconds, cpuSeconds, peakMib: Math.round(peakKib! / 1024) });
      else reject(new Error(`tessera ${args.join(' ')} exited ${code}: ${stderr}`));
    });
  });
}

async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function writeLines(path: string, line: (n: number) => object | null): Promise<void> {
  const out = createWriteStream(path);
  for (let n = 0; n < users; n += 1) {
    const value = line(n);
    if (value === null) continue;
    if (!out.write(`${JSON.stringify(value)}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

const oid = (n: number) => n.toString(16).padStart(24, '0');
const usersFile = join(dir, 'users.json');
const hashesFile = join(dir, 'hashes.json');
const bcrypt = await hash('bench password', 4);
await writeLines(usersFile, (n) => ({
  user_id: `auth0|${oid(n)}`,
  email: `user${n}@example.com`,
  email_verified: n % 2 === 0,
  name: `User ${n}`,
  created_at: '2024-03-01T10:00:00.000Z',
  identities: [
    { connection: 'Username-Password-Authentication', user_id: oid(n), provider: 'auth0' },
    ...(n % 4 === 0 ? [{ connection: 'github', user_id: String(n), provider: 'github' }] : []),
  ],
}));
await writeLines(hashesFile, (n) => ({
  _id: { $oid: oid(n) },
  email: `user${n}@example.com`,
  passwordHash: bcrypt,
  connection: 'Username-Password-Authentication',
}));

const rows: string[] = [];
try {
  for (const kind of kinds) {
    let url = join(dir, 'tessera.db');
    let drop = async (): Promise<void> => undefined;
    if (kind === 'postgres') {
      const name = `tessera_import_from_bench_${randomBytes(3).toString('hex')}`;
      await admin(`CREATE DATABASE ${name}`);
      const parsed = new URL(adminUrl);
      parsed.pathname = `/${name}`;
      url = parsed.toString();
      drop = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
    const env = {
      ...process.env,
      SERVICE_DATABASE_URL: url,
      SERVICE_DATA_DIR: dir,
      SERVICE_PASSWORD_PEPPER: 'bench-pepper',
      SERVICE_ENCRYPTION_KEY: 'bench-encryption-key',
      SERVICE_LOG_LEVEL: 'warn',
    };
    try {
      await cli(['migrate'], env);
      const args = ['identity', 'import', '--from', 'auth0', usersFile, hashesFile, '--json'];
      const first = await cli(args, env);
      const summary = JSON.parse(first.stdout) as { imported: number; elapsed_ms: number };
      if (summary.imported !== users) throw new Error(`imported ${summary.imported} of ${users}`);
      const rerun = await cli(args, env);
      const skipped = JSON.parse(rerun.stdout) as { skipped: number; elapsed_ms: number };
      const rate = (count: number, seconds: number) =>
        Math.round(count / seconds).toLocaleString('en');
      rows.push(
        `| ${kind} | ${users.toLocaleString('en')} | ${(summary.elapsed_ms / 1000).toFixed(1)} s (${rate(users, summary.elapsed_ms / 1000)}/s) | ${first.seconds.toFixed(1)} s | ${first.cpuSeconds.toFixed(1)} s | ${first.peakMib} MiB | ${(skipped.elapsed_ms / 1000).toFixed(1)} s (CPU ${rerun.cpuSeconds.toFixed(1)} s) |`,
      );
    } finally {
      await drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  '| database | users | import (in command) | import (process, wall) | CPU (user + system) | peak memory | re-run (all skipped) |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
