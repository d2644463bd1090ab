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

/** A listening `tessera serve` read through its JSON log lines. */
export interface LoggingServe extends ServeProcess {
  port: number;
  /** Every stdout line so far that is a JSON document (pino writes one per line). */
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first line (past or future) whose `msg` equals `message`. */
  line(message: string): Promise<Record<string, unknown>>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts `tessera serve` on a free port and resolves once it listens. The log level is
 * `info` whatever `env` says: the helper reads the log.
 */
export async function startServe(env: Record<string, string>): Promise<LoggingServe> {
  const run = runServe({ ...env, SERVICE_PORT: '0', SERVICE_LOG_LEVEL: 'info' });
  const server = await run.listening;
  const jsonLines = () =>
    // Complete lines only: the last one may still be arriving.
    linesOf(server.stdout().slice(0, server.stdout().lastIndexOf('\n') + 1))
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>);
  return Object.assign(server, {
    port: Number(new URL(server.url).port),
    get lines() {
      return jsonLines();
    },
    async line(message: string) {
      const quoted = JSON.stringify(message);
      await server.waitForLine((text) => text.includes(`"msg":${quoted}`));
      return jsonLines().find((line) => line.msg === message)!;
    },
    exited: run.exited,
  });
}
