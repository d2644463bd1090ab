import { type ChildProcess, spawn } from 'node:child_process';
import { CLI_ARGS, childEnv } from './cli.js';

/** A running `tessera serve`, with its JSON log lines as they come. */
export interface ServeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Every stdout line so far, parsed (pino writes one JSON document per line). */
  lines: Record<string, unknown>[];
  /** Resolves with the first line (past or future) whose `msg` equals `message`. */
  line(message: string): Promise<Record<string, unknown>>;
  /** Resolves with the exit code once the process has exited and its output is read. */
  exited: Promise<number | null>;
}

/**
 * Starts `tessera serve` on a free port and resolves once it logs that it listens. The log
 * level is `info` whatever `env` says: the helper reads the log.
 */
export function startServe(env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...CLI_ARGS, 'serve'], {
    env: childEnv({ ...env, SERVICE_PORT: '0', SERVICE_LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiting: { message: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const complete = stdout.split('\n');
    stdout = complete.pop() ?? '';
    for (const text of complete) {
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      for (const waiter of waiting.filter((w) => w.message === line.msg)) waiter.resolve(line);
    }
  });
  const line = (message: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const seen = lines.find((l) => l.msg === message);
      if (seen) resolve(seen);
      else waiting.push({ message, resolve });
    });
  return new Promise((resolve, reject) => {
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    void line('tessera listening').then((listening) => {
      const url = String(listening.address);
      resolve({ child, url, port: Number(new URL(url).port), lines, line, exited });
    });
  });
}
