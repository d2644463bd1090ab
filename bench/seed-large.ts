/**
 * Seeds the large bench database: 1,000,000 identities and 5,000,000 sessions, with
 * multi-row prepared inserts in 50,000-row transactions (SQLite) or one unnest() insert of
 * 10,000 rows per statement (PostgreSQL), and one precomputed argon2 hash shared by every
 * identity. Resumable: progress commits with each batch, so a rerun continues where an
 * interrupted one stopped, and a complete database is left as it is.
 *
 *   npm run bench:seed-large                  # SQLite: bench/.data/large.db (gitignored)
 *   npm run bench:seed-large -- --db postgres # database tessera_bench_large at
 *                                             # SERVICE_BENCH_DATABASE_URL's server
 *
 * `npm run bench -- --large` calls the same code, so running this first is optional.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LARGE_SHAPE, seedLarge } from './lib/databases.js';
import { BENCH_POSTGRES_URL } from './lib/options.js';
import { ROOT, run } from './lib/processes.js';

const { values } = parseArgs({
  options: { db: { type: 'string', default: 'sqlite' } },
  strict: true,
});
if (values.db !== 'sqlite' && values.db !== 'postgres') {
  throw new Error('--db must be sqlite or postgres');
}
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) await run('npm', ['run', 'build']);

const postgresUrl = BENCH_POSTGRES_URL;
const workDir = mkdtempSync(join(tmpdir(), 'tessera-seed-'));
const started = Date.now();
let lastLog = 0;
try {
  const { url } = await seedLarge(values.db, workDir, postgresUrl, (progress) => {
    if (Date.now() - lastLog < 5000 && progress.done !== progress.total) return;
    lastLog = Date.now();
    process.stderr.write(
      `${progress.table}: ${progress.done.toLocaleString('en-US')}/${progress.total.toLocaleString('en-US')} (${Math.round(progress.rowsPerSecond).toLocaleString('en-US')} rows/s)\n`,
    );
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  process.stdout.write(
    `${url}: ${LARGE_SHAPE.identities.toLocaleString('en-US')} identities, ${LARGE_SHAPE.sessions.toLocaleString('en-US')} sessions (${seconds} s)\n`,
  );
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
