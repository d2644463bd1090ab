import { parseArgs } from 'node:util';
import type { ScenarioName } from './load.js';

/** The PostgreSQL server the benches create their databases on (an admin connection). */
export const BENCH_POSTGRES_URL =
  process.env.SERVICE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export type DbKind = 'sqlite' | 'postgres';

export const ALL_SCENARIOS: ScenarioName[] = [
  'whoami',
  'verify',
  'identity',
  'login',
  'password',
  'link',
  'signup',
  'oidc-code',
  'oidc-refresh',
  'oidc-userinfo',
];

export interface BenchOptions {
  durationSec: number;
  warmupSec: number;
  /** A/B pairs per scenario. */
  rounds: number;
  connections: number;
  loginConnections: number;
  oidcConnections: number;
  only: ScenarioName[];
  /** The courier's sending rate (bench/lib/courier.ts): with every scenario, or `--only courier`. */
  courier: boolean;
  dbs: DbKind[];
  large: boolean;
  profile: boolean;
  build: boolean;
  postgresUrl: string;
  /** Results file stem under bench/results/. */
  out: string;
}

export const USAGE = `npm run bench -- [options]

  --duration <s>          seconds per measured round (default 4)
  --warmup <s>            seconds of discarded warm-up per process (default 1)
  --rounds <n>            A/B pairs per scenario: service, floor, service, floor... (default 3)
  --connections <n>       autocannon connections for the session scenarios (default 50)
  --login-connections <n> connections for password login (default 8)
  --oidc-connections <n>  connections for the OIDC scenarios (default 16; as many refresh chains)
  --only <a,b>            scenarios among ${ALL_SCENARIOS.join(', ')}, courier (default all)
  --db <sqlite|postgres|both>  (default both; postgres is skipped when unreachable)
  --large                 whoami on the 1M identities / 5M sessions database vs the small one
                          (seeds bench/.data/large.db once; default --db sqlite)
  --profile               run the service and its floor under --cpu-prof (every scenario
                          that runs; e.g. --profile --only whoami,verify); writes
                          bench/results/profiles/*.cpuprofile (the floor's *-floor.cpuprofile)
                          and a summary of each in the report
  --no-build              skip \`npm run build\`
  --out <stem>            results file names (default latest, or large with --large)

PostgreSQL: SERVICE_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres);
a fresh database is created for the run and dropped afterwards.`;

export function parseOptions(argv: string[]): BenchOptions | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '4' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      'login-connections': { type: 'string', default: '8' },
      'oidc-connections': { type: 'string', default: '16' },
      only: { type: 'string' },
      db: { type: 'string' },
      large: { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) return null;
  const positive = (name: string, text: string, integer = false): number => {
    const value = Number(text);
    if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}`);
    }
    return value;
  };
  const names = values.only?.split(',');
  const only = names
    ? names
        .filter((name) => name !== 'courier')
        .map((name) => {
          if (!ALL_SCENARIOS.includes(name as ScenarioName)) {
            throw new Error(`--only: unknown scenario ${name} (${ALL_SCENARIOS.join(', ')})`);
          }
          return name as ScenarioName;
        })
    : values.large
      ? (['whoami'] as ScenarioName[])
      : ALL_SCENARIOS;
  const dbText = values.db ?? (values.large ? 'sqlite' : 'both');
  if (!['sqlite', 'postgres', 'both'].includes(dbText)) {
    throw new Error('--db must be sqlite, postgres or both');
  }
  return {
    durationSec: positive('duration', values.duration),
    warmupSec: Number(values.warmup) >= 0 ? Number(values.warmup) : 1,
    rounds: positive('rounds', values.rounds, true),
    connections: positive('connections', values.connections, true),
    loginConnections: positive('login-connections', values['login-connections'], true),
    oidcConnections: positive('oidc-connections', values['oidc-connections'], true),
    only,
    courier: names ? names.includes('courier') : !values.large,
    dbs: dbText === 'both' ? ['sqlite', 'postgres'] : [dbText as DbKind],
    large: values.large,
    profile: values.profile,
    build: !values['no-build'],
    postgresUrl: BENCH_POSTGRES_URL,
    out: values.out ?? (values.large ? 'large' : 'latest'),
  };
}
