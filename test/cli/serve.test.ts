import { type ChildProcess, spawn } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGS, childEnv, cliJson, cliSandbox, type CliSandbox } from '../helpers/cli.js';

const PASSWORD = 'a long enough password';

/** Starts `tessera serve` and resolves with its address once it logs that it listens. */
function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ARGS, 'serve'], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        const match = /"address":"(http:\/\/[^"]+)"/.exec(line);
        if (match && line.includes('tessera listening')) resolve({ child, url: match[1]! });
      }
    });
    child.on('exit', (code) =>
      reject(new Error(`serve exited ${code} before listening: ${stderr}`)),
    );
  });
}

function auditActions(file: string): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT action FROM audit_log ORDER BY id').all() as {
      action: string;
    }[];
    return rows.map((row) => row.action);
  } finally {
    db.close();
  }
}

describe('tessera serve', () => {
  let box: CliSandbox;
  let env: Record<string, string>;
  beforeAll(() => {
    box = cliSandbox();
    env = {
      ...box.env,
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: '0',
      SERVICE_LOG_LEVEL: 'info',
      // Read-path audit rows stay buffered until shutdown flushes them.
      SERVICE_AUDIT_FLUSH_MS: '600000',
      SERVICE_SWEEP_INTERVAL_MINUTES: '0',
    };
  });
  afterAll(() => box?.remove());

  it('serves, and on SIGTERM exits 0 after flushing buffered audit rows', async () => {
    const { token } = await cliJson<{ token: string }>(
      [
        'svc',
        'create',
        '--name',
        'app',
        '--grant',
        'direct_auth',
        '--grant',
        'introspect',
        '--grant',
        'identity_read',
      ],
      env,
    );
    const { child, url } = await startServer(env);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const post = (path: string, body: unknown) =>
        fetch(`${url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const registered = await post('/v1/register-and-authenticate', {
        username: 'served',
        password: PASSWORD,
      });
      expect(registered.status).toBe(201);
      const { token: session } = (await registered.json()) as { token: string };
      expect((await post('/v1/sessions/verify', { token: session })).status).toBe(200);
      const lookup = await fetch(`${url}/v1/identities?username=served`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(lookup.status).toBe(200);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);

      // The mutation's row is committed with it; the reads' rows are still in memory.
      const before = auditActions(box.databaseFile);
      expect(before).toContain('identity_register_and_authenticate');
      expect(before).not.toContain('session_verify');
      expect(before).not.toContain('identity_lookup');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const after = auditActions(box.databaseFile);
    expect(after).toContain('session_verify');
    expect(after).toContain('identity_lookup');
  });
});
