/**
 * The OpenID Connect provider's token endpoint and JWKS, measured in process over real HTTP
 * on 127.0.0.1: a Tessera with OIDC on, a first-party confidential client, and one signed-in
 * user. Reports
 * - authorization_code exchanges per second (codes made beforehand through the real
 *   authorization leg, then redeemed `--concurrency` at a time),
 * - refresh_token grants per second (each rotates its token and signs a new ID token;
 *   every worker follows its own chain),
 * - the JWKS size with one key and after two rotations.
 * The load generator (fetch) runs in the same process, and its CPU is in the per-operation
 * figure (client and server together): the figures are a floor, not a capacity. Argon2 runs once (the user's sign-in), outside every measured part.
 *
 * Usage: npm run bench:oidc -- [--db sqlite|postgres] [--codes 300] [--seconds 5] [--concurrency 8]
 * SQLite honours SERVICE_SQLITE_SYNCHRONOUS from the environment (default full).
 * PostgreSQL: SERVICE_TEST_DATABASE_URL (a fresh schema is created and dropped).
 */
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { generateSigningKey } from '../src/adapters/oidc-signing-key.js';
import { registerIdentity } from '../src/domain/identities/identity-service.js';
import { createOidcClient } from '../src/domain/oidc/client-service.js';
import { SIGNING_KEY_RETENTION_MS } from '../src/domain/oidc/lifetimes.js';
import { rotateSigningKey } from '../src/domain/oidc/signing-keys.js';
import { createServiceToken } from '../src/domain/service-tokens/service-token-service.js';
import { testConfig, testHasher } from '../test/helpers/app.js';
import { createTestDatabase, type DatabaseKind } from '../test/helpers/databases.js';
import { freePort } from '../test/oidc/helpers.js';
import { authorizeSignedIn } from '../test/oidc/http-flow.js';
import { relyingParty } from '../test/oidc/relying-party.js';

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    codes: { type: 'string', default: '300' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '8' },
  },
});
const kind = values.db as DatabaseKind;
const codes = Number(values.codes);
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const CALLBACK = 'https://app.example/callback';
const ACTOR = { service_name: 'bench', service_id: null };

const db = await createTestDatabase(kind);
const port = await freePort();
const issuer = `http://127.0.0.1:${port}/oidc`;
const config = testConfig(db.databaseUrl, {
  SERVICE_OIDC_ISSUER: issuer,
  SERVICE_SWEEP_INTERVAL_MINUTES: '0',
  // Passed on when set: `full` (the default) fsyncs every commit, `normal` does not.
  ...(process.env.SERVICE_SQLITE_SYNCHRONOUS
    ? { SERVICE_SQLITE_SYNCHRONOUS: process.env.SERVICE_SQLITE_SYNCHRONOUS }
    : {}),
});
const store = db.open({ timeoutMs: config.dbTimeoutMs });
await store.migrate();
const built = await buildApp(config, { store, hasher: await testHasher() });
await built.app.listen({ port, host: '127.0.0.1' });
const deps = built.deps;

try {
  await registerIdentity(deps, ACTOR, { username: 'alice', password: 'correct horse battery' });
  const direct = await createServiceToken(deps, ACTOR, { name: 'bench', grants: ['direct_auth'] });
  const signIn = await fetch(`http://127.0.0.1:${port}/v1/authenticate/password`, {
    method: 'POST',
    headers: { authorization: `Bearer ${direct.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'alice', password: 'correct horse battery' }),
  });
  const session = ((await signIn.json()) as { token: string }).token;
  const { client, client_secret: secret } = await createOidcClient(deps, ACTOR, {
    name: 'bench',
    redirectUris: [CALLBACK],
    firstParty: true,
  });
  const rp = await relyingParty(issuer, client.client_id, secret);
  const basic = `Basic ${Buffer.from(`${client.client_id}:${secret}`).toString('base64')}`;

  const token = async (params: Record<string, string>) => {
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
    const body = (await response.json()) as Record<string, string>;
    if (response.status !== 200) throw new Error(`token endpoint: ${JSON.stringify(body)}`);
    return body;
  };

  const cpuMicros = (since: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(since);
    return used.user + used.system;
  };

  /** Runs `work` from `concurrency` workers over `items`: operations per second, CPU µs each. */
  async function rate<T>(items: T[], work: (item: T) => Promise<void>) {
    let next = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < items.length) await work(items[next++]!);
      }),
    );
    return {
      perSecond: items.length / ((performance.now() - started) / 1000),
      cpuMicros: cpuMicros(cpu) / items.length,
    };
  }

  // The authorization leg, unmeasured: `codes` codes with their PKCE verifiers.
  const pending: { code: string; verifier: string }[] = [];
  for (let i = 0; i < codes; i += 1) {
    const { auth, landedOn } = await authorizeSignedIn(rp, CALLBACK, session);
    pending.push({ code: new URL(landedOn).searchParams.get('code')!, verifier: auth.verifier });
  }
  const refreshTokens: string[] = [];
  const codeRate = await rate(pending, async ({ code, verifier }) => {
    const body = await token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: CALLBACK,
    });
    refreshTokens.push(body.refresh_token!);
  });

  // Refresh chains: each worker rotates its own token for `seconds`.
  let refreshes = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  const refreshCpu = process.cpuUsage();
  await Promise.all(
    refreshTokens.slice(0, concurrency).map(async (first) => {
      let current = first;
      while (performance.now() < until) {
        current = (await token({ grant_type: 'refresh_token', refresh_token: current }))
          .refresh_token!;
        refreshes += 1;
      }
    }),
  );
  const refreshRate = refreshes / ((performance.now() - started) / 1000);
  const refreshCpuMicros = cpuMicros(refreshCpu) / refreshes;

  const jwksBytes = async () => (await (await fetch(`${issuer}/jwks`)).arrayBuffer()).byteLength;
  const oneKey = await jwksBytes();
  for (let i = 0; i < 2; i += 1) {
    await rotateSigningKey(deps, ACTOR, generateSigningKey, SIGNING_KEY_RETENTION_MS);
  }
  await built.app.oidc!.refresh();
  const threeKeys = await jwksBytes();
  const keyCount = ((await (await fetch(`${issuer}/jwks`)).json()) as { keys: unknown[] }).keys
    .length;

  console.log(
    JSON.stringify(
      {
        database: kind,
        ...(kind === 'sqlite' ? { sqlite_synchronous: config.sqliteSynchronous } : {}),
        concurrency,
        authorization_code_per_second: Math.round(codeRate.perSecond),
        authorization_code_cpu_ms_each: Number((codeRate.cpuMicros / 1000).toFixed(2)),
        codes_redeemed: pending.length,
        refresh_token_per_second: Math.round(refreshRate),
        refresh_token_cpu_ms_each: Number((refreshCpuMicros / 1000).toFixed(2)),
        refreshes,
        jwks_bytes_one_key: oneKey,
        jwks_bytes_after_two_rotations: threeKeys,
        jwks_keys_after_two_rotations: keyCount,
      },
      null,
      2,
    ),
  );
} finally {
  await built.close();
  await db.drop();
}
