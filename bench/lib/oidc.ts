/**
 * The OpenID Connect scenarios (issue 27): Tessera's provider (`serve` with
 * SERVICE_OIDC_ISSUER) against a bare oidc-provider (bench/oidc-floor.ts), in A/B pairs,
 * driven by the same load process, compared by CPU per operation of each server process.
 *
 * - `oidc-code`: authorization_code exchanges. Before every round the round's codes are made
 *   through each server's real authorization leg (openid-client's authorization URL with
 *   PKCE S256, the browser's cookies, the interactions), unmeasured; the round redeems each
 *   once (a code lives 60 s, so they are made per round, not ahead of the run).
 * - `oidc-refresh`: refresh_token grants, one chain per connection, each grant rotating
 *   the chain's token (the first tokens come from codes exchanged before the round).
 * - `oidc-userinfo`: `GET <issuer>/me` with the access tokens of those exchanges.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type * as rp from 'openid-client';
import pg from 'pg';
import { CookieJar, authorizeSignedIn } from '../../test/oidc/http-flow.js';
import { relyingParty } from '../../test/oidc/relying-party.js';
import { identityId } from './data.js';
import type { BenchDatabase } from './databases.js';
import type { LoadResult, OidcLoadData, ScenarioName } from './load.js';
import type { BenchOptions } from './options.js';
import {
  type ServerProcess,
  cli,
  freePort,
  startOidcFloor,
  startService,
  statCpuSeconds,
} from './processes.js';
import type { ScenarioResult } from './report.js';
import {
  type CpuMeter,
  cpuProfileOf,
  cpuPer,
  log,
  measureRound,
  medianPairRatio,
  merge,
  targetsFor,
} from './scenario.js';

const CALLBACK = 'https://app.example/callback';
/** Browsers (each its own cookies, account and provider session) making codes at once. */
const BROWSERS = 8;
/**
 * Operations each server does before its measured rounds (JIT, caches): at a few hundred a
 * second, a second of warm-up would leave much of the provider's code in V8's baseline tiers.
 */
const WARMUP_OPS = 800;

interface OidcSide {
  name: 'service' | 'floor';
  server: ServerProcess;
  config: rp.Configuration;
  browsers: { jar: CookieJar; session: string | null }[];
  paths: Pick<OidcLoadData, 'tokenPath' | 'userinfoPath'>;
}

async function oidcSide(
  name: OidcSide['name'],
  server: ServerProcess,
  issuer: string,
  client: { id: string; secret: string },
  db: BenchDatabase,
): Promise<OidcSide> {
  const config = await relyingParty(issuer, client.id, client.secret);
  const metadata = config.serverMetadata();
  const browsers = Array.from({ length: BROWSERS }, (_, k) => {
    const jar = new CookieJar();
    // The floor signs in the cookie's account; Tessera the valid session's identity.
    jar.set('bench_account', identityId(k));
    return { jar, session: name === 'service' ? db.data.tokens[k]! : null };
  });
  return {
    name,
    server,
    config,
    browsers,
    paths: {
      tokenPath: new URL(metadata.token_endpoint!).pathname,
      userinfoPath: new URL(metadata.userinfo_endpoint!).pathname,
    },
  };
}

/**
 * `count` codes through the authorization leg. Each browser keeps its cookies, so after its
 * first sign-in (login, and consent at the floor) the provider session and grant carry the
 * next authorizations straight to the redirect URI, as for a user signing in again.
 */
async function mintCodes(side: OidcSide, count: number): Promise<OidcLoadData['codes']> {
  const codes: OidcLoadData['codes'] = [];
  let left = count;
  await Promise.all(
    side.browsers.map(async ({ jar, session }) => {
      while (left > 0) {
        left -= 1;
        const { auth, landedOn } = await authorizeSignedIn(
          side.config,
          CALLBACK,
          session,
          undefined,
          jar,
        );
        const code = new URL(landedOn).searchParams.get('code');
        if (!code) throw new Error(`${side.name}: no code in ${landedOn}`);
        codes.push({ code, verifier: auth.verifier });
      }
    }),
  );
  return codes;
}

/** What a round presents: its codes, or fresh refresh and access tokens (one per connection). */
async function roundData(
  side: OidcSide,
  scenario: ScenarioName,
  count: number,
  client: { id: string; secret: string },
): Promise<OidcLoadData> {
  const data: OidcLoadData = {
    ...side.paths,
    basic: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
    redirectUri: CALLBACK,
    codes: await mintCodes(side, count),
    refreshTokens: [],
    accessTokens: [],
  };
  if (scenario === 'oidc-code') return data;
  const tokenUrl = new URL(side.paths.tokenPath, side.server.url);
  for (const { code, verifier } of data.codes) {
    const response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { authorization: data.basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: CALLBACK,
      }),
    });
    const body = (await response.json()) as { refresh_token?: string; access_token?: string };
    if (!body.refresh_token || !body.access_token) {
      throw new Error(`${side.name} token endpoint: ${response.status} ${JSON.stringify(body)}`);
    }
    data.refreshTokens.push(body.refresh_token);
    data.accessTokens.push(body.access_token);
  }
  return { ...data, codes: [] };
}

/**
 * CPU of the PostgreSQL client backends on the bench database (the service's pool: the floor
 * holds no connection), read from /proc as the servers'. A backend that ends during a round
 * is missed; the pool keeps its connections.
 */
async function postgresBackends(url: string): Promise<{ meter: CpuMeter; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const sample = async () => {
    const { rows } = await client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    return new Map(rows.map(({ pid }) => [pid, statCpuSeconds(`/proc/${pid}/stat`)]));
  };
  const meter: CpuMeter = async () => {
    const before = await sample();
    return async () => {
      let seconds = 0;
      for (const [pid, cpu] of await sample()) seconds += cpu - (before.get(pid) ?? 0);
      return seconds;
    };
  };
  return { meter, close: () => client.end() };
}

export async function runOidcScenario(
  options: BenchOptions,
  db: BenchDatabase,
  scenario: ScenarioName,
  workDir: string,
): Promise<ScenarioResult> {
  const connections = options.oidcConnections;
  // A first-party client, as the operator's own application: no consent page at Tessera.
  const registered = JSON.parse(
    await cli(
      [
        'oidc',
        'client',
        'create',
        '--name',
        `bench ${scenario}`,
        '--first-party',
        '--redirect-uri',
        CALLBACK,
        '--json',
      ],
      db.env,
    ),
  ) as { client_id: string; client_secret: string };
  const client = { id: registered.client_id, secret: registered.client_secret };
  const servicePort = await freePort();
  const issuer = `http://127.0.0.1:${servicePort}/oidc`;
  const service = await startService({
    port: servicePort,
    env: { ...db.env, SERVICE_PORT: String(servicePort), SERVICE_OIDC_ISSUER: issuer },
    cpuProfile: cpuProfileOf(options, db, scenario),
  });
  let floor: ServerProcess | undefined;
  const backends = db.kind === 'postgres' ? await postgresBackends(db.url) : undefined;
  try {
    const floorPort = await freePort();
    floor = await startOidcFloor({
      port: floorPort,
      env: db.env,
      client: { ...client, redirectUri: CALLBACK },
      cpuProfile: cpuProfileOf(options, db, scenario, 'floor'),
    });
    const sides = [
      await oidcSide('service', service, issuer, client, db),
      await oidcSide('floor', floor, floor.url, client, db),
    ];
    const dataFile = join(workDir, 'oidc-data.json');
    const specFile = join(workDir, 'spec.json');
    const round = async (side: OidcSide, codes: number, seconds: number, amount?: number) => {
      const oidc = await roundData(side, scenario, codes, client);
      writeFileSync(dataFile, JSON.stringify({ ...db.data, oidc }));
      // The authorization leg's own trailing work (the service's audit flush, garbage)
      // settles before the meters start.
      await sleep(250);
      return measureRound(
        side.server,
        {
          url: side.server.url,
          scenario,
          connections,
          durationSec: seconds,
          // A code round ends when its codes are spent.
          amount: scenario === 'oidc-code' ? oidc.codes.length : amount,
          dataFile,
        },
        specFile,
        side.name === 'service' ? backends?.meter : undefined,
      );
    };
    // Warm-up, discarded; it also sizes each side's code rounds to about --duration seconds.
    const codes = scenario === 'oidc-code' ? 0 : connections;
    const perRound: number[] = [];
    for (const side of sides) {
      const warm = await round(side, codes || WARMUP_OPS, options.warmupSec, WARMUP_OPS);
      const expected = Math.round((warm.opsPerSec * options.durationSec) / connections);
      perRound.push(codes || Math.max(1, expected) * connections);
    }
    const rounds: LoadResult[][] = [[], []];
    for (let pair = 1; pair <= options.rounds; pair++) {
      // A B, then B A, as the other scenarios.
      for (const i of pair % 2 === 1 ? [0, 1] : [1, 0]) {
        rounds[i]!.push(await round(sides[i]!, perRound[i]!, options.durationSec));
      }
      const [a, b] = rounds.map((side) => side.at(-1)!);
      log(
        `${db.label} ${scenario} round ${pair}: service ${a!.opsPerSec.toFixed(1)}/s ${cpuPer(a!)}${a!.databaseCpuSeconds === undefined ? '' : ` + PostgreSQL ${Math.round((a!.databaseCpuSeconds * 1e6) / a!.ops)} µs/op`} · floor ${b!.opsPerSec.toFixed(1)}/s ${cpuPer(b!)}${Object.keys(a!.unexpected).length ? ` · unexpected ${JSON.stringify(a!.unexpected)}` : ''}`,
      );
    }
    const serviceSide = merge(rounds[0]!, service.memory());
    const ratio = medianPairRatio(rounds[0]!, rounds[1]!, 'cpu');
    return {
      db: db.label,
      scenario,
      status: 'ok',
      connections,
      service: serviceSide,
      reference: { ...merge(rounds[1]!, floor.memory()), kind: 'oidc-floor' },
      ratio,
      targets: targetsFor(db, scenario, serviceSide, ratio, connections),
    };
  } catch (error) {
    log(`${db.label} ${scenario} failed: ${String(error)}`);
    return { db: db.label, scenario, status: 'failed', note: String(error), targets: [] };
  } finally {
    await backends?.close();
    await service.stop();
    await floor?.stop();
  }
}
