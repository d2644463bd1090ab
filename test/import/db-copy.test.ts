import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import * as rp from 'openid-client';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import { runCli, cliJson } from '../helpers/cli.js';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.js';
import { httpClient } from '../helpers/http-sign-in.js';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/postgres-admin.js';
import { runServe, type ServeProcess } from '../helpers/serve.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { LOOSE_SIGN_IN_LIMITS, addIdentity, PASSWORD } from '../flows/helpers.js';
import { addClient, freePort } from '../oidc/helpers.js';
import { authorizeSignedIn } from '../oidc/http-flow.js';
import { jwtHeader, redeem, relyingParty } from '../oidc/relying-party.js';
import { STEP_MS, totpCode } from '../second-factor/helpers.js';

const CALLBACK = 'https://app.example/callback';
/** The secrets test apps run with (test/helpers/app.ts): the target must run with the same. */
const SECRETS = {
  SERVICE_PASSWORD_PEPPER: 'test-pepper',
  SERVICE_ENCRYPTION_KEY: 'test-encryption-key',
};

interface CopySummary {
  source: string;
  target: string;
  tables: { table: string; rows: number }[];
  rows: number;
  verified: boolean;
  notes: string[];
}

type Jwks = { keys: Record<string, unknown>[] };

async function jwksOf(issuer: string): Promise<Jwks> {
  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
    jwks_uri: string;
  };
  return (await (await fetch(discovery.jwks_uri)).json()) as Jwks;
}

/** An RS256 JWT's signature checked against a JWKS by node:crypto alone. */
function verifiesAgainst(jwt: string, jwks: Jwks): boolean {
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  const key = jwks.keys.find((candidate) => candidate.kid === jwtHeader(jwt).kid);
  if (!key) return false;
  return verify(
    'RSA-SHA256',
    Buffer.from(`${header}.${payload}`),
    createPublicKey({ key: key as never, format: 'jwk' }),
    Buffer.from(signature, 'base64url'),
  );
}

/** Row counts per table of a SQLite file. */
function sqliteCounts(file: string, tables: string[]): Record<string, number> {
  const raw = new BetterSqlite3(file, { readonly: true });
  try {
    return Object.fromEntries(
      tables.map((table) => [
        table,
        raw.prepare(`SELECT COUNT(*) FROM "${table}"`).pluck().get() as number,
      ]),
    );
  } finally {
    raw.close();
  }
}

/** The tables a migrated database has, its migrations' bookkeeping left out. */
async function postgresTables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'`,
    );
    return rows.map((row) => row.name).sort();
  } finally {
    await client.end();
  }
}

/**
 * The move the docs describe (docs/postgresql.md): a SQLite deployment whose users have
 * every kind of credential, copied with `tessera db copy` to PostgreSQL, then served from
 * there by `tessera serve` on the same address. Every user signs in as before, and a relying
 * party keeps working with the same client and keys.
 */
describeOnPostgres('tessera db copy: SQLite to PostgreSQL', () => {
  let source: TestDatabase;
  let target: ScratchDatabase;
  let dataDir: string;
  let serve: ServeProcess | undefined;
  let origin: string;
  let env: Record<string, string>;
  const before = {} as {
    aliceId: string;
    totpSecret: string;
    confirmCode: string;
    recoveryCodes: string[];
    aliceWaits: unknown;
    bobSession: string;
    authenticator: SoftAuthenticator;
    serviceToken: string;
    client: { id: string; secret: string };
    jwks: Jwks;
    idToken: string;
    refreshToken: string;
  };

  beforeAll(async () => {
    source = await createTestDatabase('sqlite');
    target = await createScratchDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'tessera-dbcopy-'));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    env = {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_PUBLIC_URL: origin,
      SERVICE_OIDC_ISSUER: `${origin}/oidc`,
    };

    // The SQLite deployment, populated through its HTTP API; its clock is today's, so
    // what it issues is still valid when the target serves it.
    const t = await createTestApp('sqlite', env, source);
    t.clock.advance(Date.now() - t.clock.now());
    await t.app.listen({ port, host: '127.0.0.1' });
    const http = httpClient(origin);
    try {
      before.aliceId = (await addIdentity(t, 'alice')).id;
      await addIdentity(t, 'bob');
      await addIdentity(t, 'carol');

      // alice: TOTP and recovery codes; one code is spent before the move.
      const alice = http.sessionOf((await http.password('alice', PASSWORD)).answer);
      before.totpSecret = await http.startTotp(alice);
      before.confirmCode = await totpCode(before.totpSecret, t.clock.now());
      before.recoveryCodes = await http.confirmTotp(alice, before.confirmCode);
      const waits = await http.password('alice', PASSWORD);
      before.aliceWaits = { status: waits.answer.status, body: waits.answer.json() };
      const recovered = await http.secondFactor(
        waits.flow,
        'recovery_code',
        before.recoveryCodes[0]!,
      );
      expect(await http.whoami(http.sessionOf(recovered))).toBe('alice aal2');

      // bob: a passkey, used once before the move.
      before.authenticator = new SoftAuthenticator();
      const bob = http.sessionOf((await http.password('bob', PASSWORD)).answer);
      await http.registerPasskey(bob, before.authenticator);
      before.bobSession = http.sessionOf(await http.passkey(before.authenticator));

      before.serviceToken = await t.token('identity_read');

      // carol signs in to a relying party: a first-party OIDC client with a secret.
      const created = await addClient(t, { redirectUris: [CALLBACK], firstParty: true });
      before.client = { id: created.client.client_id, secret: created.client_secret! };
      const carol = http.sessionOf((await http.password('carol', PASSWORD)).answer);
      const config = await relyingParty(`${origin}/oidc`, before.client.id, before.client.secret);
      const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, carol);
      const tokens = await redeem(config, auth, landedOn);
      before.idToken = tokens.id_token!;
      before.refreshToken = tokens.refresh_token!;
      before.jwks = await jwksOf(`${origin}/oidc`);
      expect(before.refreshToken).toBeDefined();
    } finally {
      await t.close();
    }
  });

  afterAll(async () => {
    await serve?.stop();
    await target?.drop();
    await source?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const sourceEnv = () => ({
    ...SECRETS,
    SERVICE_DATABASE_URL: source.file!,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_LOG_LEVEL: 'silent',
  });

  it('copies every table of the schema, with every row, and verifies them', async () => {
    const summary = await cliJson<CopySummary>(['db', 'copy', '--to', target.url], sourceEnv());
    const copied = summary.tables.map((entry) => entry.table);
    // Every table the migrated schema has, so a table added later cannot be left behind.
    expect([...copied].sort()).toEqual(await postgresTables(target.url));
    const counts = sqliteCounts(source.file!, copied);
    expect(Object.fromEntries(summary.tables.map((entry) => [entry.table, entry.rows]))).toEqual(
      counts,
    );
    for (const table of ['totp_factors', 'passkeys', 'service_tokens', 'oidc_clients']) {
      expect(counts[table], table).toBeGreaterThan(0);
    }
    expect(counts.recovery_codes).toBe(before.recoveryCodes.length);
    expect(counts.oidc_signing_keys).toBeGreaterThan(0);
    expect(summary).toMatchObject({ source: 'sqlite', target: 'postgres', verified: true });
    expect(summary.notes.join('\n')).toContain('SERVICE_ENCRYPTION_KEY');
  });

  it('serves every user from PostgreSQL exactly as before', async () => {
    serve = await runServe({
      ...env,
      ...SECRETS,
      SERVICE_DATABASE_URL: target.url,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PORT: new URL(origin).port,
      SERVICE_LOG_LEVEL: 'info',
    }).listening;
    const http = httpClient(origin);

    // alice's password alone still only opens the second step, with the same methods.
    const waits = await http.password('alice', PASSWORD);
    expect({ status: waits.answer.status, body: waits.answer.json() }).toEqual(before.aliceWaits);
    expect(waits.answer.status).toBe(403);
    expect(waits.answer.cookie('service_session')).toBeUndefined();
    // Her authenticator app's next code signs her in; the code spent before the move stays spent.
    const replayed = await http.secondFactor(waits.flow, 'totp', before.confirmCode);
    expect(replayed.status).toBe(401);
    const code = await totpCode(before.totpSecret, Date.now() + STEP_MS);
    const signedIn = await http.secondFactor(waits.flow, 'totp', code);
    expect(await http.whoami(http.sessionOf(signedIn))).toBe('alice aal2');

    // Recovery codes: the one used before the move is refused, the others work.
    const spent = await http.password('alice', PASSWORD);
    const refused = await http.secondFactor(spent.flow, 'recovery_code', before.recoveryCodes[0]!);
    expect(refused.status).toBe(401);
    const next = await http.password('alice', PASSWORD);
    const recovered = await http.secondFactor(next.flow, 'recovery_code', before.recoveryCodes[1]!);
    expect(await http.whoami(http.sessionOf(recovered))).toBe('alice aal2');

    // bob: his passkey signs him in, and his session from before the move still holds.
    expect(await http.whoami(http.sessionOf(await http.passkey(before.authenticator)))).toBe(
      'bob aal2',
    );
    expect(await http.whoami(before.bobSession)).toBe('bob aal2');

    // The service token works as before.
    const read = await fetch(`${origin}/v1/identities/${before.aliceId}`, {
      headers: { authorization: `Bearer ${before.serviceToken}` },
    });
    expect(read.status).toBe(200);
  });

  it('keeps a relying party working: same client, same keys, same grants', async () => {
    const issuer = `${origin}/oidc`;
    const jwks = await jwksOf(issuer);
    expect(jwks).toEqual(before.jwks);
    expect(verifiesAgainst(before.idToken, jwks)).toBe(true);

    // The same client, rediscovered against the target: a refresh token from before the
    // move is redeemed there, and its new ID token verifies against the target's JWKS.
    const config = await relyingParty(issuer, before.client.id, before.client.secret);
    const refreshed = await rp.refreshTokenGrant(config, before.refreshToken);
    expect(refreshed.claims()?.sub).toBe(jwtClaims(before.idToken).sub);
    expect(verifiesAgainst(refreshed.id_token!, jwks)).toBe(true);

    // And a new sign-in of carol with it.
    const http = httpClient(origin);
    const carol = http.sessionOf((await http.password('carol', PASSWORD)).answer);
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, carol);
    const tokens = await redeem(config, auth, landedOn);
    expect(tokens.claims()?.sub).toBe(jwtClaims(before.idToken).sub);
  });

  it('refuses a target that is not empty, naming what is there, and writes nothing', async () => {
    const tables = await postgresTables(target.url);
    const result = await runCli(['db', 'copy', '--to', target.url], sourceEnv());
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^tessera: validation_error: the target database is not empty \(identities: 3, .*\); db copy writes only into an empty one$/,
    );
    expect(await postgresTables(target.url)).toEqual(tables);
  });

  it('copies back from PostgreSQL into a new SQLite file, row for row', async () => {
    const file = join(dataDir, 'back', 'tessera.db');
    const summary = await cliJson<CopySummary>(['db', 'copy', '--to', file], {
      ...SECRETS,
      SERVICE_DATABASE_URL: target.url,
      SERVICE_DATA_DIR: dataDir,
      SERVICE_LOG_LEVEL: 'silent',
    });
    expect(summary).toMatchObject({ source: 'postgres', target: 'sqlite', verified: true });
    const copied = summary.tables.map((entry) => entry.table);
    expect(Object.fromEntries(summary.tables.map((entry) => [entry.table, entry.rows]))).toEqual(
      sqliteCounts(file, copied),
    );
  });
});

function jwtClaims(jwt: string): { sub?: string } {
  return JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as {
    sub?: string;
  };
}
