/**
 * The admin console's overview as the data grows (issue 27 item 4): `buildOverview` (the
 * page's queries: sign-ins per hour from the audit log, live sessions, new identities per
 * day) timed on the small bench database (2,000 identities, 10,000 sessions) and on the
 * large one (1,000,000 identities, 5,000,000 live sessions, `npm run bench:seed-large`),
 * each query alone and the whole overview, the median of `--runs`.
 *
 *   npm run bench:overview                 # SQLite
 *   npm run bench:overview -- --db postgres --runs 5
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DAY_MS, HOUR_MS, buildOverview } from '../src/domain/admin/overview.js';
import { openStorage } from '../src/storage/open.js';
import { type BenchDatabase, largeDatabase, smallDatabase } from './lib/databases.js';
import type { DbKind } from './lib/options.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    runs: { type: 'string', default: '5' },
  },
  strict: true,
});
const kind = values.db as DbKind;
const runs = Number(values.runs);
const postgresUrl =
  process.env.SERVICE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function timed(work: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return median(times);
}

async function measure(db: BenchDatabase): Promise<Record<string, number>> {
  const store = openStorage({ databaseUrl: db.url, timeoutMs: 600_000, poolSize: 4 });
  try {
    const now = Date.now();
    const methods = ['password', 'passkey', 'provider'];
    return {
      'sign-ins, 7 days': await timed(() => store.countSignIns(now - 7 * DAY_MS, HOUR_MS, methods)),
      'live sessions': await timed(() => store.countLiveSessions(now)),
      'new identities, 30 days': await timed(() =>
        store.countNewIdentities(now - 30 * DAY_MS, DAY_MS),
      ),
      'the overview': await timed(() => buildOverview(store, now)),
    };
  } finally {
    await store.close();
  }
}

const workDir = mkdtempSync(join(tmpdir(), 'tessera-overview-'));
try {
  const small = await smallDatabase(kind, workDir, postgresUrl);
  let smallFigures: Record<string, number>;
  try {
    smallFigures = await measure(small);
  } finally {
    await small.drop();
  }
  const large = await largeDatabase(kind, workDir, postgresUrl, () => undefined);
  const largeFigures = await measure(large);
  const lines = [
    `| ${kind} | small ms | large ms | large / small |`,
    '|---|--:|--:|--:|',
    ...Object.keys(smallFigures).map((part) => {
      const a = smallFigures[part]!;
      const b = largeFigures[part]!;
      return `| ${part} | ${a.toFixed(2)} | ${b.toFixed(1)} | ${(b / a).toFixed(0)}x |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
