/**
 * `tessera identity import` and `identity export` on 100,000 users, on SQLite and on
 * PostgreSQL, through the real CLI (one process per command). The file carries a bcrypt
 * hash (cost 4) and one link per user: import parses and bounds each hash but never
 * verifies it, so the figures are the import's own cost, not a hash's.
 *
 * Usage: npm run bench:import -- [--users 100000] [--db sqlite|postgres|both]
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
    users: { type: 'string', default: '100000' },
    db: { type: 'string', default: 'both' },
  },
});
const users = Number(values.users);
const kinds = values.db === 'both' ? ['sqlite', 'postgres'] : [values.db!];
const adminUrl =
  process.env.SERVICE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ROOT = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'tessera-import-bench-'));

/** Runs the CLI; resolves with its stdout (or the lines it wrote, when counting) and wall time. */
function cli(args: string[], env: NodeJS.ProcessEnv, countLines = false) {
  return new Promise<{ stdout: string; lines: number; seconds: number }>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    let lines = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      if (countLines) {
        for (const byte of chunk) if (byte === 10) lines += 1;
      } else stdout += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code === 0) resolve({ stdout, lines, seconds });
      else reject(new Error(`tessera ${args.join(' ')} exited ${code}`));
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

async function writeFile(path: string): Promise<void> {
  const bcrypt = await hash('bench password', 4);
  const out = createWriteStream(path);
  for (let n = 0; n < users; n += 1) {
    const line = JSON.stringify({
      username: `user${n}`,
      display_name: `User ${n}`,
      password_hash: bcrypt,
      links: [{ provider: 'legacy', subject: `legacy-${n}`, verified: true }],
    });
    if (!out.write(`${line}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

const file = join(dir, 'users.jsonl');
await writeFile(file);
const rows: string[] = [];
try {
  for (const kind of kinds) {
    let url = join(dir, 'tessera.db');
    let drop = async (): Promise<void> => undefined;
    if (kind === 'postgres') {
      const name = `tessera_import_bench_${randomBytes(3).toString('hex')}`;
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
      const first = await cli(['identity', 'import', file, '--json'], env);
      const summary = JSON.parse(first.stdout) as { imported: number; elapsed_ms: number };
      if (summary.imported !== users) throw new Error(`imported ${summary.imported} of ${users}`);
      const rerun = await cli(['identity', 'import', file, '--json'], env);
      const skipped = JSON.parse(rerun.stdout) as { skipped: number; elapsed_ms: number };
      const exported = await cli(['identity', 'export', '--include-password-hashes'], env, true);
      if (exported.lines !== users) throw new Error(`exported ${exported.lines} of ${users}`);
      const rate = (count: number, seconds: number) =>
        Math.round(count / seconds).toLocaleString('en');
      rows.push(
        `| ${kind} | ${users.toLocaleString('en')} | ${(summary.elapsed_ms / 1000).toFixed(1)} s (${rate(users, summary.elapsed_ms / 1000)}/s) | ${first.seconds.toFixed(1)} s (${rate(users, first.seconds)}/s) | ${(skipped.elapsed_ms / 1000).toFixed(1)} s | ${exported.seconds.toFixed(1)} s (${rate(users, exported.seconds)}/s) |`,
      );
    } finally {
      await drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  '| database | users | import (in command) | import (process, wall) | re-run (all skipped) | export with hashes (wall) |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
