import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');

/** Runs a child to completion; rejects with its output when it fails. */
export function run(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: ROOT, env }, (error, stdout, stderr) => {
      if (error) reject(new Error(`node ${args.join(' ')} failed:\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * `npm run build`, but into a private directory inside node_modules (so the build finds
 * its dependencies): the shared dist/ may be in use by a benchmark run at the same time.
 */
export async function buildService(): Promise<{ main: string; remove(): void }> {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const outDir = mkdtempSync(join(cache, 'tessera-links-build-'));
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await run([tsc, '-p', 'tsconfig.build.json', '--outDir', outDir], process.env);
  return {
    main: join(outDir, 'cli', 'main.js'),
    remove: () => rmSync(outDir, { recursive: true, force: true }),
  };
}

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

/** The environment of a Tessera child: ours, minus any SERVICE_* the test run carries. */
export function serviceEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('SERVICE_')),
  );
  return { ...inherited, ...settings };
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `tessera serve` on `port` and waits until /readyz answers 200. */
export async function startServer(
  main: string,
  port: number,
  env: NodeJS.ProcessEnv,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [main, 'serve'], {
    cwd: ROOT,
    env: { ...env, SERVICE_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: ServerProcess = {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), sleep(10_000, false)]);
      if (!stopped) child.kill('SIGKILL');
      await exited;
    },
  };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const ready = await fetch(`${server.url}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return server;
    await sleep(100);
  }
  await server.stop();
  throw new Error(`tessera serve on port ${port} did not become ready:\n${output}`);
}
