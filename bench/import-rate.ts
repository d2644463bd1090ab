/**
 * `tessera identity import` and `identity export` on 100,000 users, on SQLite and on
 * PostgreSQL, through the real CLI (one process per command). The file carries a bcrypt
 * hash (cost 4) and one link per user: import parses and bounds each hash but never
 * verifies it, so the figures are the import's own cost, not a hash's.
 *
 * Usage: npm run bench:import -- [--users 100000] [--db sqlite|postgres|both]
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
    users: { type: 'string', default: '100000' },
    db: { type: 'string', default: 'both' },
  },
});
const users = Number(values.users);
const kinds = (values.db === 'both' ? ['sqlite', 'postgres'] : [values.db!]) as DbKind[];
const dir = mkdtempSync(join(tmpdir(), 'tessera-import-bench-'));

const file = join(dir, 'users.jsonl');
const bcrypt = await hash('bench password', 4);
await writeJsonLines(file, users, (n) => ({
  username: `user${n}`,
  display_name: `User ${n}`,
  password_hash: bcrypt,
  links: [{ provider: 'legacy', subject: `legacy-${n}`, verified: true }],
}));
const rate = (count: number, seconds: number) => Math.round(count / seconds).toLocaleString('en');
const rows: string[] = [];
try {
  await onEachDatabase(kinds, dir, async (kind, env) => {
    const first = await runCli(['identity', 'import', file, '--json'], env);
    const summary = JSON.parse(first.stdout) as { imported: number; elapsed_ms: number };
    if (summary.imported !== users) throw new Error(`imported ${summary.imported} of ${users}`);
    const rerun = await runCli(['identity', 'import', file, '--json'], env);
    const skipped = JSON.parse(rerun.stdout) as { skipped: number; elapsed_ms: number };
    const exported = await runCli(['identity', 'export', '--include-password-hashes'], env, true);
    if (exported.lines !== users) throw new Error(`exported ${exported.lines} of ${users}`);
    rows.push(
      `| ${kind} | ${users.toLocaleString('en')} | ${(summary.elapsed_ms / 1000).toFixed(1)} s (${rate(users, summary.elapsed_ms / 1000)}/s) | ${first.seconds.toFixed(1)} s (${rate(users, first.seconds)}/s) | ${(skipped.elapsed_ms / 1000).toFixed(1)} s | ${exported.seconds.toFixed(1)} s (${rate(users, exported.seconds)}/s) |`,
    );
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  '| database | users | import (in command) | import (process, wall) | re-run (all skipped) | export with hashes (wall) |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const row of rows) console.log(row);
