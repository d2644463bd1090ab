/**
 * What a client sees while another process holds SQLite's write lock (issue 12): a real
 * `tessera serve` on a fresh file, a second process holding `BEGIN EXCLUSIVE` for
 * `--hold` ms, and during the hold whoami, /healthz and verify (an audited read) every
 * 50 ms each and a profile write every 500 ms. Prints the latency of each kind during the
 * hold and the statuses of the writes.
 *
 * Usage: node --import tsx bench/sqlite-lock.ts [--hold 10000] [--timeout 5000]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    hold: { type: 'string', default: '10000' },
    timeout: { type: 'string', default: '5000' },
  },
});
const hold = Number(values.hold);
const dir = mkdtempSync(join(tmpdir(), 'tessera-lock-'));
const file = join(dir, 'tessera.db');
const port = 20_000 + Math.floor(Math.random() * 20_000);
const base = `http://127.0.0.1:${port}`;
const env = {
  ...process.env,
  SERVICE_DATABASE_URL: file,
  SERVICE_DATA_DIR: dir,
  SERVICE_PORT: String(port),
  SERVICE_PASSWORD_PEPPER: 'lock-bench-pepper',
  SERVICE_ENCRYPTION_KEY: 'lock-bench-encryption-key',
  SERVICE_LOG_LEVEL: 'silent',
  SERVICE_DB_TIMEOUT_MS: values.timeout,
};
const cli = ['--import', 'tsx', 'src/cli/main.ts'];
const children: ChildProcess[] = [];

try {
  const grants = ['introspect', 'direct_auth', 'identity_write'].flatMap((g) => ['--grant', g]);
  const created = execFileSync(
    process.execPath,
    [...cli, 'svc', 'create', '--name', 'lock', ...grants, '--json'],
    { env },
  );
  const bearer = {
    authorization: `Bearer ${(JSON.parse(created.toString()) as { token: string }).token}`,
  };
  children.push(spawn(process.execPath, [...cli, 'serve'], { env, stdio: 'inherit' }));
  while (
    !(await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await sleep(100);

  const minted = (await (
    await fetch(`${base}/v1/register-and-authenticate`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'locked', password: 'correct horse battery' }),
    })
  ).json()) as { token: string; session: { identity: { id: string } } };

  const holder = spawn(
    process.execPath,
    [
      '-e',
      `const db = new (require('better-sqlite3'))(${JSON.stringify(file)});
       db.exec('BEGIN EXCLUSIVE'); console.log('locked');
       setTimeout(() => { db.exec('ROLLBACK'); console.log('released'); }, ${hold});`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(holder);
  let held = true;
  await new Promise((resolve) => holder.stdout!.once('data', resolve));
  const released = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  void released.then(() => (held = false));

  const samples: Record<string, number[]> = { whoami: [], healthz: [], verify: [], write: [] };
  const statuses: Record<string, number> = {};
  async function every(kind: string, ms: number, send: () => Promise<Response>) {
    while (held) {
      const started = performance.now();
      const res = await send();
      await res.arrayBuffer();
      samples[kind]!.push(performance.now() - started);
      if (kind === 'write') statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      await sleep(ms);
    }
  }
  const json = { ...bearer, 'content-type': 'application/json' };
  await Promise.all([
    every('whoami', 50, () =>
      fetch(`${base}/v1/whoami`, { headers: { cookie: `service_session=${minted.token}` } }),
    ),
    every('healthz', 50, () => fetch(`${base}/healthz`)),
    every('verify', 50, () =>
      fetch(`${base}/v1/sessions/verify`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ token: minted.token }),
      }),
    ),
    every('write', 500, () =>
      fetch(`${base}/v1/identities/${minted.session.identity.id}/profile`, {
        method: 'PATCH',
        headers: json,
        body: JSON.stringify({ display_name: `n${Date.now()}` }),
      }),
    ),
  ]);
  const round = (n: number) => Math.round(n * 10) / 10;
  const figures = Object.fromEntries(
    Object.entries(samples).map(([kind, ms]) => {
      const sorted = [...ms].sort((a, b) => a - b);
      const at = (q: number) =>
        round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
      return [kind, { n: ms.length, p50: at(0.5), p99: at(0.99), max: at(1) }];
    }),
  );
  console.log(
    JSON.stringify({
      holdMs: hold,
      timeoutMs: Number(values.timeout),
      latencyMs: figures,
      writeStatuses: statuses,
    }),
  );
} finally {
  for (const child of children) child.kill('SIGTERM');
  await sleep(500);
  rmSync(dir, { recursive: true, force: true });
}
