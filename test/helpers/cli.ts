import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The CLI as users run it: a separate Node process over src/cli/main.ts, transpiled once per
 * run by test/helpers/global-setup.ts (or through tsx when a run has no such build).
 *
 * Started with V8's `--no-opt`: the suite starts some 300 of these processes, most of
 * them living a fraction of a second, and the optimising compiler's work for code that then
 * exits was about a quarter of a short command's CPU (`svc list`: 0.41-0.48 s against
 * 0.31-0.35), a tenth over the CLI suites' 266 processes (0.65 against 0.59 s each). The
 * code run is the same; only how V8 compiles it differs.
 */
export const CLI_ARGS = ['--no-opt', ...cliEntry()];

function cliEntry(): string[] {
  const built = inject('tesseraCli');
  return built ? [built] : ['--import', 'tsx', 'src/cli/main.ts'];
}

/** A temp directory holding one SQLite database, and the environment pointing the CLI at it. */
export interface CliSandbox {
  dir: string;
  databaseFile: string;
  env: Record<string, string>;
  remove(): void;
}

export function cliSandbox(): CliSandbox {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-cli-'));
  const databaseFile = join(dir, 'tessera.db');
  return {
    dir,
    databaseFile,
    env: {
      SERVICE_DATA_DIR: dir,
      SERVICE_DATABASE_URL: databaseFile,
      SERVICE_PASSWORD_PEPPER: 'cli-test-pepper',
      SERVICE_ENCRYPTION_KEY: 'cli-test-encryption-key',
      SERVICE_ARGON2_MEMORY_KIB: '19456',
      SERVICE_ARGON2_ITERATIONS: '2',
      SERVICE_ARGON2_PARALLELISM: '1',
      SERVICE_LOG_LEVEL: 'silent',
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The parent's environment without any SERVICE_* setting, plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('SERVICE_')),
  );
  return { ...base, ...env };
}

export function runCli(
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<CliResult> {
  return runNode([...CLI_ARGS, ...args], env, input);
}

/** `node argv…` with `env` (see childEnv) and `input` on standard input, run to its exit. */
export function runNode(
  argv: string[],
  env: Record<string, string>,
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      env: childEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** Runs a command that must succeed with `--json` and parses its one JSON document. */
export async function cliJson<T = unknown>(
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<T> {
  const result = await runCli([...args, '--json'], env, input);
  if (result.code !== 0) {
    throw new Error(`tessera ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  }
  return JSON.parse(result.stdout) as T;
}
