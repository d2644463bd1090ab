import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { BENCH_POSTGRES_URL, type DbKind } from './options.js';
import { freshPostgresDatabase, serviceEnv } from './databases.js';

const ROOT = join(import.meta.dirname, '..', '..');

export interface CliRun {
  stdout: string;
  /** Lines written to stdout, when counted instead of kept. */
  lines: number;
  /** Wall time of the process. */
  seconds: number;
  /** User + system: on a machine shared with other work, wall time says more about the rest. */
  cpuSeconds: number;
  peakMib: number;
}

/**
 * Runs the CLI (from src/, through tsx) under GNU time: its stdout (or, with `countLines`,
 * how many lines it wrote, for an export too large to keep), wall and CPU time, peak RSS.
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv, countLines = false) {
  return new Promise<CliRun>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(
      '/usr/bin/time',
      ['-f', '%M %U %S', process.execPath, '--import', 'tsx', 'src/cli/main.ts', ...args],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    let lines = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      if (!countLines) stdout += chunk.toString();
      else for (const byte of chunk) if (byte === 10) lines += 1;
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const [peakKib, user, system] = stderr.trim().split('\n').pop()!.split(' ').map(Number);
      const peakMib = Math.round(peakKib! / 1024);
      if (code === 0) resolve({ stdout, lines, seconds, cpuSeconds: user! + system!, peakMib });
      else reject(new Error(`tessera ${args.join(' ')} exited ${code}: ${stderr}`));
    });
  });
}

/** Writes `line(n)` for n below `count` as JSON lines (a null writes nothing). */
export async function writeJsonLines(
  path: string,
  count: number,
  line: (n: number) => object | null,
): Promise<void> {
  const out = createWriteStream(path);
  for (let n = 0; n < count; n += 1) {
    const value = line(n);
    if (value === null) continue;
    if (!out.write(`${JSON.stringify(value)}\n`))
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

/**
 * Runs `measure` with the environment of a fresh, migrated database of each kind: a SQLite
 * file in `dir`, or a new PostgreSQL database beside SERVICE_BENCH_DATABASE_URL's, dropped
 * after.
 */
export async function onEachDatabase(
  kinds: DbKind[],
  dir: string,
  measure: (kind: DbKind, env: NodeJS.ProcessEnv) => Promise<void>,
): Promise<void> {
  for (const kind of kinds) {
    const database =
      kind === 'postgres'
        ? await freshPostgresDatabase(BENCH_POSTGRES_URL)
        : { url: join(dir, 'tessera.db'), drop: async () => undefined };
    try {
      const env = serviceEnv(database.url, dir);
      await runCli(['migrate'], env);
      await measure(kind, env);
    } finally {
      await database.drop();
    }
  }
}
