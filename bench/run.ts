/**
 * `npm run bench`: load scenarios against the real service (`node dist/cli/main.js serve`, a
 * child process) on SQLite and PostgreSQL, each alternating A/B with its reference (the floor
 * server, or for password login the argon2-only bound), all in separate processes from the
 * load generator. Writes bench/results/<out>.md. See `--help`.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import {
  type BenchDatabase,
  LARGE_SHAPE,
  largeDatabase,
  postgresReachable,
  smallDatabase,
} from './lib/databases.js';
import { type CourierResult, measureCourier } from './lib/courier.js';
import { type BenchOptions, USAGE, parseOptions } from './lib/options.js';
import { ROOT, run } from './lib/processes.js';
import { summarizeProfile } from './lib/profile.js';
import {
  type BenchReport,
  type LargeComparison,
  type ScenarioResult,
  markdown,
} from './lib/report.js';
import { runOidcScenario } from './lib/oidc.js';
import { PROFILES, log, runScenario } from './lib/scenario.js';

const RESULTS = join(ROOT, 'bench/results');

async function profileSummary(result: ScenarioResult, db: BenchDatabase): Promise<void> {
  const stem = join(PROFILES, `${db.label.replace(' ', '-')}-${result.scenario}`);
  try {
    result.profile = summarizeProfile(`${stem}.cpuprofile`);
    // The floor's threads wrote one each (CPU.<date>.<pid>.<thread>.<n>.cpuprofile): its
    // main thread, thread 0, is the reference's profile.
    if (existsSync(`${stem}-floor`)) {
      const main = readdirSync(`${stem}-floor`).find((name) => /\.0\.\d+\.cpuprofile$/.test(name));
      if (main) renameSync(join(`${stem}-floor`, main), `${stem}-floor.cpuprofile`);
      rmSync(`${stem}-floor`, { recursive: true, force: true });
      if (main) result.referenceProfile = summarizeProfile(`${stem}-floor.cpuprofile`);
    }
  } catch (error) {
    log(`no profile for ${db.label} ${result.scenario}: ${String(error)}`);
  }
}

async function main(): Promise<void> {
  let options: BenchOptions | null;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const startedAt = new Date().toISOString();
  const loadAtStart = loadavg()[0]!;
  if (options.build) {
    log('npm run build');
    await run('npm', ['run', 'build']);
  }
  const notes: string[] = [
    "Every process is separate: the service (`node dist/cli/main.js serve`), the floor (`bench/floor.ts`), the argon2 bound (`bench/argon2-bound.ts`) and the load generator (autocannon's API in `bench/load-process.ts`, a fresh process per round). On 2 cores the load generator competes with the server for CPU, equally for the service and the floor.",
    'Each session scenario rotates over 10,000 distinct valid tokens (verify/whoami) or 2,000 identity ids; small database: 2,000 identities, 10,000 sessions. Before measuring, whoami and verify present every token twice to the service and to the floor (discarded warm-up); login signs in 1,500 times (its code is as warm as in a service that has signed people in for a while); the other scenarios warm up for --warmup seconds.',
    "CPU µs/op is the measured process's user+system CPU time (all threads, from /proc/<pid>/stat) per completed operation: less sensitive than req/s to other load on the machine. For the argon2 bound it is the bound process's own CPU per verification.",
    "The ratio is the median over the A/B pairs of service / reference per second (an even number of pairs: the mean of the middle two), so one pair hit by CPU steal from other guests on the host does not move it (three pairs, the default) or moves it less than a ratio of totals; the per-pair figures below give every pair with the steal measured during it. Against the floor, \"CPU\" under the ratio is the same median by CPU: the floor's CPU per request over the service's (issue 27 sets whoami's and verify's target in CPU per request).",
    "Latency is measured by the load generator per response (float ms): p50 is the mean of the rounds' medians, p99 the worst round's. For login it is the password POST alone; the rate counts completed logins (a `GET /v1/login` plus a POST each, a fresh flow per login).",
    "autocannon keeps every connection busy (closed loop), so each round saturates the machine and by Little's law the mean latency is connections / throughput: at 50 connections a p99 under 5 ms needs well over 10,000 req/s with little spread; compare with the floor's own p99 in the same run.",
    "RSS is the service process's: once ready before any request, after one password sign-in (argon2 allocates its memory per hash; the sign-in is made in every scenario, so the peak includes it), and the peak, VmHWM (the kernel's peak resident set) at the end of the scenario; every scenario starts a fresh service process.",
    'Rate limits are raised for the run (SERVICE_RATE_LIMIT_*=100000000/1s): the limiter still runs and writes its counters on every login.',
    "OIDC scenarios (issue 27): the service runs with SERVICE_OIDC_ISSUER and a first-party confidential client (`client_secret_basic`, RS256 2048, PKCE S256); the reference is a bare oidc-provider of the same version with its in-memory adapter (`bench/oidc-floor.ts`), configured alike. Codes are made before each round through each server's real authorization leg and redeemed once; refresh follows one rotating chain per connection; userinfo rotates over the access tokens of those exchanges; each server does 800 operations of the scenario before the measured rounds. Their ratio is by CPU: the floor's CPU µs/op over the service's (the service's operations per CPU second over the floor's); on PostgreSQL the service's CPU cell also gives its client backends' CPU per operation (/proc), which the ratio does not include.",
  ];
  const workDir = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
  const results: ScenarioResult[] = [];
  const large: LargeComparison[] = [];
  const courier: CourierResult[] = [];
  try {
    for (const kind of options.dbs) {
      if (kind === 'postgres') {
        const problem = await postgresReachable(options.postgresUrl);
        if (problem) {
          notes.push(`PostgreSQL skipped: ${options.postgresUrl} unreachable (${problem}).`);
          log(`postgres unreachable: ${problem}`);
          continue;
        }
      }
      log(`${kind}: preparing the small database`);
      const small = await smallDatabase(kind, workDir, options.postgresUrl);
      try {
        let bigDb: BenchDatabase | undefined;
        if (options.large) {
          log(`${kind}: preparing the large database (seeded once, then cached)`);
          let lastLog = 0;
          bigDb = await largeDatabase(kind, workDir, options.postgresUrl, (progress) => {
            if (Date.now() - lastLog > 5000 || progress.done === progress.total) {
              lastLog = Date.now();
              log(
                `seeding ${progress.table}: ${progress.done.toLocaleString('en-US')}/${progress.total.toLocaleString('en-US')} (${Math.round(progress.rowsPerSecond).toLocaleString('en-US')} rows/s)`,
              );
            }
          });
        }
        for (const scenario of options.only) {
          // The OIDC scenarios have a floor and a load of their own (bench/lib/oidc.ts).
          const measure = scenario.startsWith('oidc-') ? runOidcScenario : runScenario;
          const smallResult = await measure(options, small, scenario, workDir);
          if (options.profile) await profileSummary(smallResult, small);
          results.push(smallResult);
          if (bigDb) {
            const largeResult = await measure(options, bigDb, scenario, workDir);
            if (options.profile) await profileSummary(largeResult, bigDb);
            results.push(largeResult);
            if (smallResult.service && largeResult.service) {
              const ratio = largeResult.service.opsPerSec / smallResult.service.opsPerSec;
              large.push({
                db: `${kind} ${scenario}`,
                small: smallResult,
                large: largeResult,
                ratio,
                target: { text: 'large / small ≥ 0.8', pass: ratio >= 0.8 },
              });
            }
          }
        }
        if (options.courier) {
          log(`${kind}: the courier's sending rate`);
          courier.push(await measureCourier(small));
        }
      } finally {
        await small.drop();
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }

  const nproc = Number((await run('nproc', [])).trim());
  if (options.large) {
    notes.push(
      `Large database: ${LARGE_SHAPE.identities.toLocaleString('en-US')} identities, ${LARGE_SHAPE.sessions.toLocaleString('en-US')} sessions (\`bench/seed-large.ts\`); the 10,000 presented tokens are spread over all 5M sessions.`,
    );
  }
  // The settings the measured service ran with (its own config loader, this environment).
  const serviceDefaults = loadConfig({ ...process.env, SERVICE_DATABASE_URL: ':memory:' });
  const report: BenchReport = {
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: nproc,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      memoryGb: Math.round(totalmem() / 2 ** 30),
      kernel: release(),
      loadAverage: [loadAtStart, loadavg()[0]!],
    },
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    settings: {
      'round seconds': options.durationSec,
      'A/B pairs': options.rounds,
      'warm-up seconds': options.warmupSec,
      connections: options.connections,
      'login connections': options.loginConnections,
      'OIDC connections': options.oidcConnections,
      SERVICE_HASH_CONCURRENCY: serviceDefaults.hashConcurrency,
      SERVICE_DB_POOL_SIZE: serviceDefaults.dbPoolSize,
      profiled: options.profile,
    },
    results,
    large,
    courier,
    notes,
  };
  mkdirSync(RESULTS, { recursive: true });
  const stem = join(RESULTS, options.out);
  writeFileSync(`${stem}.md`, markdown(report));
  process.stdout.write(markdown(report));
  log(`wrote ${stem}.md`);
}

await main();
