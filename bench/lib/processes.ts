import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoadResult, LoadSpec } from './load.js';

export const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const TSX = ['--import', 'tsx'];
/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on every Linux build in use). */
const CLOCK_TICKS = 100;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Runs a child to completion and returns its stdout; rejects with its stderr on failure. */
export function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || error}`));
        else resolve(stdout);
      },
    );
  });
}

/** `node dist/cli/main.js <args>` with the given environment. */
export function cli(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return run(process.execPath, [join(ROOT, 'dist/cli/main.js'), ...args], env);
}

/** Last JSON line a bench child printed. */
function lastJsonLine<T>(stdout: string): T {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as T;
}

export async function runLoadProcess(spec: LoadSpec, specFile: string): Promise<LoadResult> {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(specFile, JSON.stringify(spec));
  return lastJsonLine<LoadResult>(
    await run(process.execPath, [...TSX, join(ROOT, 'bench/load-process.ts'), specFile]),
  );
}

export async function runArgon2Bound(
  seconds: number,
  env: NodeJS.ProcessEnv,
): Promise<{ perSec: number; verifications: number; cpuSeconds: number; concurrency: number }> {
  return lastJsonLine(
    await run(
      process.execPath,
      [...TSX, join(ROOT, 'bench/argon2-bound.ts'), String(seconds)],
      env,
    ),
  );
}

/** utime + stime of a process or thread from its `stat` file, in seconds (NaN once gone). */
export function statCpuSeconds(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat(5); here offset by the two skipped.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

export interface MemorySample {
  /** Highest VmRSS seen while sampling, MiB. */
  rssPeakMb: number;
  /** VmHWM (the kernel's own peak RSS of the process), MiB. */
  hwmMb: number;
  /** VmRSS once ready, before any request, MiB. */
  startMb?: number;
  /** VmRSS after one password sign-in (argon2's memory included), MiB. */
  afterSignInMb?: number;
}

/** The machine's CPU time counters (all cores), in clock ticks, from /proc/stat. */
export interface CpuTicks {
  /** Time the hypervisor ran something else while this machine's vCPUs wanted to run. */
  steal: number;
  total: number;
}

export function machineCpuTicks(): CpuTicks {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const fields = first.trim().split(/\s+/).slice(1, 9).map(Number);
    return { steal: fields[7] ?? 0, total: fields.reduce((sum, n) => sum + n, 0) };
  } catch {
    return { steal: NaN, total: NaN };
  }
}

/** Share of the machine's CPU time stolen by the hypervisor between two readings. */
export function stealShare(before: CpuTicks, after: CpuTicks): number {
  const total = after.total - before.total;
  return total > 0 ? (after.steal - before.steal) / total : NaN;
}

function readStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** A listening child process (the service or the floor) with an RSS sampler. */
export class ServerProcess {
  #rssPeakKb = 0;
  /** VmRSS at the moments the report names (`mark`). */
  readonly marks: Pick<MemorySample, 'startMb' | 'afterSignInMb'> = {};
  #timer: NodeJS.Timeout | undefined;
  #exited: Promise<number | null>;
  stderr = '';

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    this.#exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-20_000);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-20_000);
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  static async start(
    name: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    port: number,
  ): Promise<ServerProcess> {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new ServerProcess(name, child, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) {
        throw new Error(`${name} exited with ${child.exitCode} at start:\n${server.stderr}`);
      }
      try {
        const response = await fetch(`${server.url}/healthz`);
        if (response.ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${name} did not become ready:\n${server.stderr}`);
      }
      await sleep(50);
    }
    server.mark('startMb');
    server.#timer = setInterval(() => {
      server.#rssPeakKb = Math.max(server.#rssPeakKb, readStatusKb(server.pid, 'VmRSS'));
    }, 50);
    return server;
  }

  /** CPU seconds (user + system, all threads) the process has used so far. */
  cpuSeconds(): number {
    return statCpuSeconds(`/proc/${this.pid}/stat`);
  }

  /**
   * CPU seconds of the main thread alone (the event loop: JavaScript, the synchronous SQLite
   * driver and its fsyncs). On login the rest is argon2 on the libuv threads, so this is
   * the share the service adds to the bound.
   */
  mainThreadCpuSeconds(): number {
    return statCpuSeconds(`/proc/${this.pid}/task/${this.pid}/stat`);
  }

  /** Records VmRSS now as `name`. */
  mark(name: keyof ServerProcess['marks']): void {
    this.marks[name] = readStatusKb(this.pid, 'VmRSS') / 1024;
  }

  memory(): MemorySample {
    this.#rssPeakKb = Math.max(this.#rssPeakKb, readStatusKb(this.pid, 'VmRSS'));
    return {
      rssPeakMb: this.#rssPeakKb / 1024,
      hwmMb: readStatusKb(this.pid, 'VmHWM') / 1024,
      ...this.marks,
    };
  }

  /** SIGTERM (graceful: the service flushes its audit buffer and, with --cpu-prof, its profile). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    const code = await Promise.race([this.#exited, sleep(15_000).then(() => 'timeout' as const)]);
    if (code === 'timeout') {
      this.child.kill('SIGKILL');
      await this.#exited;
    }
  }
}

/**
 * The node flags `npm start` runs the service with (package.json), so that the bench measures
 * the service as users start it (the floor gets them too).
 */
const START_FLAGS: string[] = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));

/**
 * Where `--profile` has a process write its profile (`node --cpu-prof`). Without a name,
 * each thread writes one of its own there (a floor runs under tsx, whose loader thread
 * would otherwise overwrite the main thread's file).
 */
export interface CpuProfileFile {
  dir: string;
  name?: string;
}

const profileFlags = (file: CpuProfileFile | undefined): string[] =>
  file
    ? ['--cpu-prof', `--cpu-prof-dir=${file.dir}`].concat(
        file.name ? [`--cpu-prof-name=${file.name}`] : [],
      )
    : [];

export function startService(options: {
  port: number;
  env: NodeJS.ProcessEnv;
  cpuProfile?: CpuProfileFile;
}): Promise<ServerProcess> {
  return ServerProcess.start(
    'service',
    [...START_FLAGS, ...profileFlags(options.cpuProfile), join(ROOT, 'dist/cli/main.js'), 'serve'],
    options.env,
    options.port,
  );
}

/**
 * A floor process (a bench/*.ts file) on `port`, with the same node flags as the service, so
 * that peak RSS compares like with like.
 */
function startBenchServer(
  name: string,
  file: string,
  port: number,
  env: NodeJS.ProcessEnv,
  cpuProfile?: CpuProfileFile,
): Promise<ServerProcess> {
  return ServerProcess.start(
    name,
    [...START_FLAGS, ...profileFlags(cpuProfile), ...TSX, join(ROOT, file)],
    { ...env, FLOOR_PORT: String(port) },
    port,
  );
}

export function startFloor(options: {
  port: number;
  databaseUrl: string;
  responseBytes: number;
  env: NodeJS.ProcessEnv;
  cpuProfile?: CpuProfileFile;
}): Promise<ServerProcess> {
  return startBenchServer(
    'floor',
    'bench/floor.ts',
    options.port,
    {
      ...options.env,
      SERVICE_DATABASE_URL: options.databaseUrl,
      FLOOR_RESPONSE_BYTES: String(options.responseBytes),
    },
    options.cpuProfile,
  );
}

/** The bare oidc-provider (bench/oidc-floor.ts), serving `client` at its root issuer. */
export function startOidcFloor(options: {
  port: number;
  env: NodeJS.ProcessEnv;
  client: { id: string; secret: string; redirectUri: string };
  cpuProfile?: CpuProfileFile;
}): Promise<ServerProcess> {
  return startBenchServer(
    'oidc floor',
    'bench/oidc-floor.ts',
    options.port,
    {
      ...options.env,
      FLOOR_OIDC_CLIENT_ID: options.client.id,
      FLOOR_OIDC_CLIENT_SECRET: options.client.secret,
      FLOOR_OIDC_REDIRECT_URI: options.client.redirectUri,
    },
    options.cpuProfile,
  );
}
