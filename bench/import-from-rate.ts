/**
 * `tessera identity import --from auth0` on a generated Auth0 export of 1,000,000 users
 * (the bulk user export as JSON lines plus the password-hash export), through the real CLI,
 * on SQLite and/or PostgreSQL, then the same import again (all skipped). Every user has a
 * bcrypt hash (cost 4, one hash shared by all: import parses and bounds each hash but never
 * verifies one, so the figure is the import's own cost); every fourth a GitHub link. Peak
 * memory is the CLI process's maximum resident set (GNU time).
 *
 * Usage: npm run bench:import-from -- [--users 1000000] [--db sqlite|postgres|both]
 * PostgreSQL: SERVICE_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres);
 * a fresh database is created and dropped.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { hash } from '@node-rs/bcrypt';
import { onEachDatabase, runCli, writeJsonLines } from './lib/import-run.js';
import type { DbKind } from './lib/options.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '1000000' },
    db: { type: 'string', default: 'sqlite' },
  },
});
const users = Number(values.users);
const kinds = (values.db === 'both' ? ['sqlite', 'postgres'] : [values.db!]) as DbKind[];
const dir = mkdtempSync(join(tmpdir(), 'tessera-import-from-bench-'));

const oid = (n: number) => n.toString(16).padStart(24, '0');
const usersFile = join(dir, 'users.json');
const hashesFile = join(dir, 'hashes.json');
const bcrypt = await hash('bench password', 4);
await writeJsonLines(usersFile, users, (n) => ({
  user_id: `auth0|${oid(n)}`,
  email: `user${n}@example.com`,
  email_verified: n % 2 === 0,
  name: `User ${n}`,
  created_at: '2024-03-01T10:00:00.000Z',
  identities: [
    { connection: 'Username-Password-Authentication', user_id: oid(n), provider: 'auth0' },
    ...(n % 4 === 0 ? [{ connection: 'github', user_id: String(n), provider: 'github' }] : []),
  ],
}));
await writeJsonLines(hashesFile, users, (n) => ({
  _id: { $oid: oid(n) },
  email: `user${n}@example.com`,
  passwordHash: bcrypt,
  connection: 'Username-Password-Authentication',
}));

const rate = (count: number, seconds: number) => Math.round(count / seconds).toLocaleString('en');
const rows: string[] = [];
try {
  await onEachDatabase(kinds, dir, async (kind, env) => {
    const args = ['identity', 'import', '--from', 'auth0', usersFile, hashesFile, '--json'];
    const first = await runCli(args, env);
    const summary = JSON.parse(first.stdout) as { imported: number; elapsed_ms: number };
    if (summary.imported !== users) throw new Error(`imported ${summary.imported} of ${users}`);
    const rerun = await runCli(args, env);
    const skipped = JSON.parse(rerun.stdout) as { skipped: number; elapsed_ms: number };
    rows.push(
      `| ${kind} | ${users.toLocaleString('en')} | ${(summary.elapsed_ms / 1000).toFixed(1)} s (${rate(users, summary.elapsed_ms / 1000)}/s) | ${first.seconds.toFixed(1)} s | ${first.cpuSeconds.toFixed(1)} s | ${first.peakMib} MiB | ${(skipped.elapsed_ms / 1000).toFixed(1)} s (CPU ${rerun.cpuSeconds.toFixed(1)} s) |`,
    );
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  '| database | users | import (in command) | import (process, wall) | CPU (user + system) | peak memory | re-run (all skipped) |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
