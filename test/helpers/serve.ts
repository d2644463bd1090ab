import { type ChildProcess, spawn } from 'node:child_process';
import { CLI_ARGS, childEnv } from './cli.js';

/** A `tessera serve` child whose every byte of output the test keeps. */
export interface ServeProcess {
  child: ChildProcess;
  /** Set once it logs that it listens. */
  url: string;
  stdout(): string;
  stderr(): string;
  /** Resolves once a line of either stream satisfies `match` (no sleeping, no deadline). */
  waitForLine(match: (line: string) => boolean): Promise<string>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Runs `tessera serve` with `env` (only), or resolves with the exit code if it never listens. */
export function runServe(env: Record<string, string>): {
  process: ChildProcess;
  exited: Promise<number | null>;
  listening: Promise<ServeProcess>;
  stdout(): string;
  stderr(): string;
} {
  const child = spawn(process.execPath, [...CLI_ARGS, 'serve'], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters = new Set<{ match: (line: string) => boolean; resolve: (line: string) => void }>();
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const check = () => {
    for (const waiter of waiters) {
      const lines = `${stdout}\n${stderr}`.split('\n');
      const line = lines.find((candidate) => waiter.match(candidate));
      if (line !== undefined) {
        waiters.delete(waiter);
        waiter.resolve(line);
      }
    }
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    check();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    check();
  });
  const waitForLine = (match: (line: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      waiters.add({ match, resolve });
      check();
      void exited.then((code) => reject(new Error(`serve exited ${code}:\n${stdout}\n${stderr}`)));
    });
  const listening = waitForLine((line) => line.includes('"tessera listening"')).then(
    (line): ServeProcess => ({
      child,
      url: (JSON.parse(line) as { address: string }).address,
      stdout: () => stdout,
      stderr: () => stderr,
      waitForLine,
      stop() {
        if (child.exitCode === null) child.kill('SIGTERM');
        return exited;
      },
    }),
  );
  // A test expecting the process to fail awaits `exited` and never `listening`.
  listening.catch(() => undefined);
  return { process: child, exited, listening, stdout: () => stdout, stderr: () => stderr };
}

/** The non-empty lines of a stream's output. */
export function linesOf(output: string): string[] {
  return output.split('\n').filter((line) => line.trim() !== '');
}
