/**
 * `npm run bench`: load scenarios against the real service (`node dist/cli/main.js serve`, a
 * child process) on SQLite and PostgreSQL, each alternating A/B with its reference (the floor
 * server, or for password login the argon2-only bound), all in separate processes from the
 * load generator. Writes bench/results/<out>.md, .svg and .json. See `--help`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  type BenchDatabase,
  LARGE_SHAPE,
  largeDatabase,
  postgresReachable,
  smallDatabase,
} from './lib/databases.js';
import type { LoadResult, ScenarioName } from './lib/load.js';
import { type BenchOptions, USAGE, parseOptions } from './lib/options.js';
import {
  ROOT,
  type ServerProcess,
  freePort,
  run,
  runArgon2Bound,
  runLoadProcess,
  startFloor,
  startService,
  machineCpuTicks,
  stealShare,
} from './lib/processes.js';
import { loadConfig } from '../src/config.js';
import { summarizeProfile } from './lib/profile.js';
import {
  type BenchReport,
  type LargeComparison,
  type ScenarioResult,
  type Side,
  type Target,
  markdown,
  svg,
} from './lib/report.js';

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const RESULTS = join(ROOT, 'bench/results');
const PROFILES = join(RESULTS, 'profiles');
const RSS_LIMIT_MB = 200;

function merge(results: LoadResult[], memory?: Side['memory']): Side {
  const ops = results.reduce((sum, r) => sum + r.ops, 0);
  const seconds = results.reduce((sum, r) => sum + r.durationSec, 0);
  const unexpected: Record<string, number> = {};
  for (const r of results) {
    for (const [status, n] of Object.entries(r.unexpected)) {
      unexpected[status] = (unexpected[status] ?? 0) + n;
    }
  }
  return {
    opsPerSec: ops / seconds,
    rounds: results.map((r) => r.opsPerSec),
    steal: results.map((r) => r.stealShare ?? NaN),
    p50: results.reduce((sum, r) => sum + r.p50, 0) / results.length,
    p99: Math.max(...results.map((r) => r.p99)),
    unexpected,
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    timeouts: results.reduce((sum, r) => sum + r.timeouts, 0),
    cpuUsPerOp: (results.reduce((sum, r) => sum + (r.serverCpuSeconds ?? NaN), 0) * 1e6) / ops,
    memory,
  };
}

/**
 * The median over the A/B pairs of service / reference: each pair ran back to back, so a
 * burst of load from outside (CPU steal on a shared host) that hits one pair does not move
 * the figure the way it moves a ratio of totals.
 */
function medianPairRatio(service: LoadResult[], reference: LoadResult[]): number {
  const ratios = service
    .map((round, i) => round.opsPerSec / reference[i]!.opsPerSec)
    .sort((a, b) => a - b);
  const middle = ratios.length >> 1;
  return ratios.length % 2 === 1 ? ratios[middle]! : (ratios[middle - 1]! + ratios[middle]!) / 2;
}

const json = { 'content-type': 'application/json' };

/** Checks one request of the scenario answers as expected; returns why not otherwise. */
async function probe(
  url: string,
  scenario: ScenarioName,
  db: BenchDatabase,
): Promise<{ ok: true } | { ok: false; missing: boolean; note: string }> {
  const bearer = { authorization: `Bearer ${db.data.serviceToken}` };
  const token = db.data.tokens[0]!;
  let response: Response;
  switch (scenario) {
    case 'whoami':
      response = await fetch(`${url}/v1/whoami`, {
        headers: { cookie: `service_session=${token}` },
      });
      break;
    case 'verify':
      response = await fetch(`${url}/v1/sessions/verify`, {
        method: 'POST',
        headers: { ...bearer, ...json },
        body: JSON.stringify({ token }),
      });
      break;
    case 'identity':
      response = await fetch(`${url}/v1/identities/${db.data.identityIds[0]}`, {
        headers: bearer,
      });
      break;
    case 'link':
      response = await createLinks(url, db);
      break;
    case 'login': {
      response = await fetch(`${url}/v1/login`, { headers: { accept: 'application/json' } });
      if (response.status !== 200) break;
      const flow = (await response.json()) as { id: string; csrf_token: string };
      response = await fetch(`${url}/v1/flows/${flow.id}/password`, {
        method: 'POST',
        headers: { ...json, accept: 'application/json' },
        body: JSON.stringify({
          username: db.data.usernames[0],
          password: db.data.password,
          csrf_token: flow.csrf_token,
        }),
      });
      break;
    }
  }
  if (response.status === 200) return { ok: true };
  const body = (await response.text()).slice(0, 200);
  return {
    ok: false,
    missing: response.status === 404 && body.includes('not_found'),
    note: `${response.status} ${body}`,
  };
}

/** The returning users of the link scenario: each subject's first sign-in creates it (201). */
async function createLinks(url: string, db: BenchDatabase): Promise<Response> {
  let last: Response | undefined;
  const subjects = [...db.data.linkSubjects];
  const worker = async () => {
    for (let next = subjects.shift(); next; next = subjects.shift()) {
      const response = await fetch(`${url}/v1/authenticate/link`, {
        method: 'POST',
        headers: { authorization: `Bearer ${db.data.serviceToken}`, ...json },
        body: JSON.stringify({
          provider: 'bench',
          subject: next.subject,
          seed: { username: next.username, display_name: next.username },
        }),
      });
      if (response.status !== 200 && response.status !== 201) {
        subjects.length = 0;
        last = response;
        return;
      }
      await response.arrayBuffer();
      last = response;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  if (last && last.status === 201) return new Response(null, { status: 200 });
  return last!;
}

/** Size of the Session object whoami answers (verify's when whoami does not exist yet). */
async function sessionBodyBytes(url: string, db: BenchDatabase): Promise<number> {
  const token = db.data.tokens[0]!;
  const whoami = await fetch(`${url}/v1/whoami`, {
    headers: { cookie: `service_session=${token}` },
  });
  if (whoami.status === 200) return (await whoami.arrayBuffer()).byteLength;
  await whoami.arrayBuffer();
  const verify = await fetch(`${url}/v1/sessions/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${db.data.serviceToken}`, ...json },
    body: JSON.stringify({ token }),
  });
  if (verify.status !== 200) throw new Error(`verify probe answered ${verify.status}`);
  return (await verify.arrayBuffer()).byteLength;
}

function targetsFor(
  db: BenchDatabase,
  scenario: ScenarioName,
  service: Side,
  ratio: number | undefined,
  connections: number,
): Target[] {
  const targets: Target[] = [];
  const atLeast = (value: number) => ({
    text: `ratio ≥ ${value}`,
    pass: ratio !== undefined && ratio >= value,
  });
  if (scenario === 'whoami') {
    targets.push(atLeast(0.75));
    if (db.kind === 'sqlite') {
      targets.push({
        text: `p99 < 5 ms${connections === 50 ? '' : ` (target is at 50 connections, ran ${connections})`}`,
        pass: service.p99 < 5,
      });
    }
  }
  if (scenario === 'verify') targets.push(atLeast(0.6));
  if (scenario === 'login') targets.push(atLeast(0.9));
  const rss = service.memory?.hwmMb ?? 0;
  targets.push({ text: `RSS < ${RSS_LIMIT_MB} MB`, pass: rss > 0 && rss < RSS_LIMIT_MB });
  return targets;
}

const cpuPer = (result: LoadResult) =>
  `(${Math.round(((result.serverCpuSeconds ?? NaN) * 1e6) / result.ops)} µs CPU/op)`;

async function runScenario(
  options: BenchOptions,
  db: BenchDatabase,
  scenario: ScenarioName,
  workDir: string,
): Promise<ScenarioResult> {
  const servicePort = await freePort();
  const profiling = options.profile;
  const profileName = `${db.label.replace(' ', '-')}-${scenario}.cpuprofile`;
  if (profiling) {
    mkdirSync(PROFILES, { recursive: true });
    rmSync(join(PROFILES, profileName), { force: true });
  }
  const service = await startService({
    port: servicePort,
    env: { ...db.env, SERVICE_PORT: String(servicePort) },
    cpuProfile: profiling ? { dir: PROFILES, name: profileName } : undefined,
  });
  let floor: ServerProcess | undefined;
  const connections = scenario === 'login' ? options.loginConnections : options.connections;
  const dataFile = join(workDir, `${db.label.replace(' ', '-')}-data.json`);
  writeFileSync(dataFile, JSON.stringify(db.data));
  const specFile = join(workDir, 'spec.json');
  try {
    const checked = await probe(service.url, scenario, db);
    if (!checked.ok) {
      log(`${db.label} ${scenario}: ${checked.missing ? 'route not available' : 'failed'}`);
      return {
        db: db.label,
        scenario,
        status: checked.missing ? 'unavailable' : 'failed',
        note: checked.missing ? 'route not in this build' : checked.note,
        targets: [],
      };
    }
    const load = async (target: ServerProcess, seconds: number, amount?: number) => {
      const before = target.cpuSeconds();
      const ticksBefore = machineCpuTicks();
      const result = await runLoadProcess(
        {
          url: target.url,
          scenario: target === floor ? 'whoami' : scenario,
          connections,
          durationSec: seconds,
          amount,
          dataFile,
        },
        specFile,
      );
      return {
        ...result,
        serverCpuSeconds: target.cpuSeconds() - before,
        stealShare: stealShare(ticksBefore, machineCpuTicks()),
      };
    };
    if (scenario !== 'login') {
      const floorPort = await freePort();
      floor = await startFloor({
        port: floorPort,
        databaseUrl: db.url,
        responseBytes: await sessionBodyBytes(service.url, db),
        env: db.env,
      });
    }
    // Warm-up, discarded: the session scenarios present every one of their tokens twice
    // (JIT, SQLite and OS page caches see the whole working set, which matters on the
    // large database), the others run for --warmup seconds.
    // On the large database the pages behind 10,000 random tokens are spread over ~2 GB:
    // four passes instead of two before the measured rounds.
    const passes = db.shape.sessions > 1_000_000 ? 4 : 2;
    const warmupAmount = ['whoami', 'verify'].includes(scenario)
      ? db.data.tokens.length * passes
      : undefined;
    if (options.warmupSec > 0 || warmupAmount) {
      await load(service, options.warmupSec, warmupAmount);
      if (floor) await load(floor, options.warmupSec, db.data.tokens.length * passes);
    }
    const serviceRounds: LoadResult[] = [];
    const referenceRounds: LoadResult[] = [];
    const measureReference = async (): Promise<LoadResult> => {
      if (floor) return load(floor, options.durationSec);
      const ticksBefore = machineCpuTicks();
      const bound = await runArgon2Bound(options.durationSec, db.env);
      return {
        ops: bound.verifications,
        opsPerSec: bound.perSec,
        responses: bound.verifications,
        durationSec: bound.verifications / bound.perSec,
        p50: NaN,
        p99: NaN,
        mean: NaN,
        unexpected: {},
        errors: 0,
        timeouts: 0,
        serverCpuSeconds: bound.cpuSeconds,
        stealShare: stealShare(ticksBefore, machineCpuTicks()),
      };
    };
    for (let round = 1; round <= options.rounds; round++) {
      // A B, then B A: a drift of the machine during the run weighs on both sides alike.
      let a: LoadResult;
      let b: LoadResult;
      if (round % 2 === 1) {
        a = await load(service, options.durationSec);
        b = await measureReference();
      } else {
        b = await measureReference();
        a = await load(service, options.durationSec);
      }
      serviceRounds.push(a);
      referenceRounds.push(b);
      log(
        `${db.label} ${scenario} round ${round}: service ${a.opsPerSec.toFixed(1)}/s p99 ${a.p99.toFixed(2)} ms ${cpuPer(a)} · ${floor ? 'floor' : 'argon2'} ${b.opsPerSec.toFixed(1)}/s ${cpuPer(b)}${Object.keys(a.unexpected).length ? ` · unexpected ${JSON.stringify(a.unexpected)}` : ''}`,
      );
    }
    const serviceSide = merge(serviceRounds, service.memory());
    const reference = {
      ...merge(referenceRounds, floor?.memory()),
      kind: floor ? ('floor' as const) : ('argon2' as const),
    };
    const ratio = medianPairRatio(serviceRounds, referenceRounds);
    return {
      db: db.label,
      scenario,
      status: 'ok',
      connections,
      service: serviceSide,
      reference,
      ratio,
      targets: targetsFor(db, scenario, serviceSide, ratio, connections),
    };
  } finally {
    await service.stop();
    await floor?.stop();
  }
}

async function profileSummary(result: ScenarioResult, db: BenchDatabase): Promise<void> {
  const file = join(PROFILES, `${db.label.replace(' ', '-')}-${result.scenario}.cpuprofile`);
  try {
    result.profile = summarizeProfile(file);
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
    'Each session scenario rotates over 10,000 distinct valid tokens (verify/whoami) or 2,000 identity ids; small database: 2,000 identities, 10,000 sessions. Before measuring, whoami and verify present every token twice to the service and to the floor (discarded warm-up); the other scenarios warm up for --warmup seconds.',
    "CPU µs/op is the measured process's user+system CPU time (all threads, from /proc/<pid>/stat) per completed operation: less sensitive than req/s to other load on the machine. For the argon2 bound it is the bound process's own CPU per verification.",
    'The ratio is the median over the A/B pairs of service / reference per second (an even number of pairs: the mean of the middle two), so one pair hit by CPU steal from other guests on the host does not move it (three pairs, the default) or moves it less than a ratio of totals; the per-pair figures below give every pair with the steal measured during it.',
    "Latency is measured by the load generator per response (float ms): p50 is the mean of the rounds' medians, p99 the worst round's. For login it is the password POST alone; the rate counts completed logins (a `GET /v1/login` plus a POST each, a fresh flow per login).",
    "autocannon keeps every connection busy (closed loop), so each round saturates the machine and by Little's law the mean latency is connections / throughput: at 50 connections a p99 under 5 ms needs well over 10,000 req/s with little spread; compare with the floor's own p99 in the same run.",
    "Peak RSS is the service process's VmHWM (kernel peak resident set) at the end of the scenario; every scenario starts a fresh service process.",
    'Rate limits are raised for the run (SERVICE_RATE_LIMIT_*=100000000/1s): the limiter still runs and writes its counters on every login.',
  ];
  const workDir = mkdtempSync(join(tmpdir(), 'tessera-bench-'));
  const results: ScenarioResult[] = [];
  const large: LargeComparison[] = [];
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
          const smallResult = await runScenario(options, small, scenario, workDir);
          if (options.profile) await profileSummary(smallResult, small);
          results.push(smallResult);
          if (bigDb) {
            const largeResult = await runScenario(options, bigDb, scenario, workDir);
            if (options.profile) await profileSummary(largeResult, bigDb);
            results.push(largeResult);
            if (smallResult.service && largeResult.service) {
              const ratio = largeResult.service.opsPerSec / smallResult.service.opsPerSec;
              large.push({
                db: `${kind} ${scenario}`,
                small: smallResult,
                large: largeResult,
                ratio,
                target: { text: 'within 10% (≥ 0.9)', pass: ratio >= 0.9 },
              });
            }
          }
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
      SERVICE_HASH_CONCURRENCY: serviceDefaults.hashConcurrency,
      SERVICE_DB_POOL_SIZE: serviceDefaults.dbPoolSize,
      profiled: options.profile,
    },
    results,
    large,
    notes,
  };
  mkdirSync(RESULTS, { recursive: true });
  const stem = join(RESULTS, options.out);
  writeFileSync(`${stem}.md`, markdown(report));
  writeFileSync(`${stem}.svg`, svg(report));
  writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(markdown(report));
  log(`wrote ${stem}.md, .svg, .json`);
}

await main();
