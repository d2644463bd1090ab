import { createPublicKey, verify } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/adapters/oidc-signing-key.js';
import { SIGNING_KEY_RETENTION_MS } from '../../src/domain/oidc/lifetimes.js';
import { publishedSigningKeys, rotateSigningKey } from '../../src/domain/oidc/signing-keys.js';
import { createSecretBox } from '../../src/lib/secret-box.js';
import { openStorage } from '../../src/storage/open.js';
import { FakeClock } from '../helpers/clock.js';
import { cliSandbox, type CliSandbox } from '../helpers/cli.js';
import {
  createTestDatabase,
  describeEachDatabase,
  describeOnPostgres,
  type TestDatabase,
} from '../helpers/databases.js';
import { asAdmin, createScratchDatabase } from '../helpers/postgres-admin.js';
import { runServe, type ServeProcess } from '../helpers/serve.js';
import { addClient, addUser, freePort, PASSWORD, startOidcApp, type OidcApp } from './helpers.js';
import { authorizeSignedIn } from './http-flow.js';
import { jwtHeader, redeem, relyingParty } from './relying-party.js';

const KEY_A = 'encryption-key-a-0123456789abcdef';
const KEY_B = 'encryption-key-b-fedcba9876543210';
const CALLBACK = 'https://app.example/callback';

/** True when `jwt`'s RS256 signature verifies with the key of its `kid` in `issuer`'s JWKS. */
async function verifiesAgainstJwks(issuer: string, jwt: string): Promise<boolean> {
  const { keys } = (await (await fetch(`${issuer}/jwks`)).json()) as {
    keys: Array<{ kid: string }>;
  };
  const jwk = keys.find((key) => key.kid === jwtHeader(jwt).kid);
  if (!jwk) return false;
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  return verify(
    'sha256',
    Buffer.from(`${header}.${payload}`),
    createPublicKey({ key: jwk, format: 'jwk' }),
    Buffer.from(signature, 'base64url'),
  );
}

/**
 * Rotating SERVICE_ENCRYPTION_KEY (docs/operations.md): signing keys sealed under the old
 * key are re-sealed under the new one when an instance loads them, so the old key can be
 * dropped without rotating signing keys. Three starts of an instance on one database (each
 * on a port, and so an issuer, of its own: an ID token from before is checked by signature).
 */
describeEachDatabase('OIDC signing keys across an encryption key rotation', (kind) => {
  let db: TestDatabase;
  let app: OidcApp | undefined;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  async function restart(env: Record<string, string>): Promise<OidcApp> {
    await app?.close();
    app = await startOidcApp(kind, { db, env });
    return app;
  }

  /** A sign-in through a first-party client, the ID token checked by openid-client. */
  async function signIn(t: OidcApp, clientId: string, secret: string, session: string) {
    const config = await relyingParty(t.issuer, clientId, secret);
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, session);
    return redeem(config, auth, landedOn);
  }

  it('re-seals under the new key on load; the same kid signs before, between and after', async () => {
    const first = await restart({ SERVICE_ENCRYPTION_KEY: KEY_A });
    await addUser(first);
    const { client, client_secret: secret } = await addClient(first, {
      redirectUris: [CALLBACK],
      firstParty: true,
    });
    const direct = await first.token('direct_auth');
    const signedIn = await first.call('POST', '/v1/authenticate/password', direct, {
      username: 'alice',
      password: PASSWORD,
    });
    const session = (signedIn.json() as { token: string }).token;
    const before = await signIn(first, client.client_id, secret!, session);
    const kid = jwtHeader(before.id_token!).kid!;
    const [sealedUnderA] = await first.deps.store.listSigningKeys();
    expect(sealedUnderA?.id).toBe(kid);
    expect(
      createSecretBox(KEY_B).open(sealedUnderA!.sealed_private_jwk, `oidc-signing-key:${kid}`),
    ).toBeNull();

    // B current, A previous: the first load re-seals the key under B.
    const second = await restart({
      SERVICE_ENCRYPTION_KEY: KEY_B,
      SERVICE_ENCRYPTION_KEYS_PREVIOUS: KEY_A,
    });
    const between = await signIn(second, client.client_id, secret!, session);
    expect(jwtHeader(between.id_token!).kid).toBe(kid);
    expect(await verifiesAgainstJwks(second.issuer, before.id_token!)).toBe(true);
    const [resealed] = await second.deps.store.listSigningKeys();
    expect(resealed?.id).toBe(kid);
    expect(resealed?.public_jwk).toBe(sealedUnderA?.public_jwk);
    expect(resealed?.sealed_private_jwk).not.toBe(sealedUnderA?.sealed_private_jwk);
    const onlyB = createSecretBox(KEY_B);
    expect(onlyB.isStale(resealed!.sealed_private_jwk)).toBe(false);
    expect(onlyB.open(resealed!.sealed_private_jwk, `oidc-signing-key:${kid}`)).toBe(
      createSecretBox(KEY_A).open(sealedUnderA!.sealed_private_jwk, `oidc-signing-key:${kid}`),
    );
    // Loading again (every instance re-reads the keys each minute) writes nothing more.
    await second.app.oidc!.refresh();
    expect((await second.deps.store.listSigningKeys())[0]?.sealed_private_jwk).toBe(
      resealed?.sealed_private_jwk,
    );

    // A dropped: the provider still loads, and the same key signs.
    const third = await restart({ SERVICE_ENCRYPTION_KEY: KEY_B });
    const after = await signIn(third, client.client_id, secret!, session);
    expect(jwtHeader(after.id_token!).kid).toBe(kid);
    expect(await verifiesAgainstJwks(third.issuer, before.id_token!)).toBe(true);
    expect(await verifiesAgainstJwks(third.issuer, between.id_token!)).toBe(true);
  });

  it('several instances loading at once agree, and leave every key sealed under the new key', async () => {
    const t = await restart({ SERVICE_ENCRYPTION_KEY: KEY_A });
    await rotateSigningKey(
      t.deps,
      { service_name: 'oidc-tests', service_id: null },
      generateSigningKey,
      SIGNING_KEY_RETENTION_MS,
    );
    const rotated = createSecretBox(KEY_B, [KEY_A]);
    const stores = [t.deps.store, db.open(), db.open()];
    try {
      const loads = await Promise.all(
        stores.map((store) =>
          publishedSigningKeys(
            { store, clock: t.clock, secretBox: rotated },
            SIGNING_KEY_RETENTION_MS,
          ),
        ),
      );
      // Every instance opened the same keys, whichever of them wrote the re-sealed value.
      expect(new Set(loads.map((keys) => JSON.stringify(keys))).size).toBe(1);
      const rows = await t.deps.store.listSigningKeys();
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(rotated.isStale(row.sealed_private_jwk)).toBe(false);
        expect(
          createSecretBox(KEY_B).open(row.sealed_private_jwk, `oidc-signing-key:${row.id}`),
        ).not.toBeNull();
      }
    } finally {
      for (const store of stores.slice(1)) await store.close();
    }
  });
});

/** `tessera serve` loads the signing keys at start-up: a restart alone re-seals them. */
describe('tessera serve re-seals OIDC signing keys at start-up', () => {
  let box: CliSandbox | undefined;
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    box?.remove();
  });

  const sealedKeys = () => {
    const db = new BetterSqlite3(box!.databaseFile, { readonly: true });
    try {
      return db.prepare('SELECT id, sealed_private_jwk FROM oidc_signing_keys').all() as Array<{
        id: string;
        sealed_private_jwk: string;
      }>;
    } finally {
      db.close();
    }
  };

  it('seals under A, restarts with B and A previous, then with B alone', async () => {
    box = cliSandbox();
    const port = await freePort();
    const start = async (keys: Record<string, string>) => {
      await server?.stop();
      server = await runServe({
        ...box!.env,
        ...keys,
        SERVICE_LOG_LEVEL: 'info',
        SERVICE_PORT: String(port),
        SERVICE_OIDC_ISSUER: `http://127.0.0.1:${port}/oidc`,
      }).listening;
      return server;
    };

    await start({ SERVICE_ENCRYPTION_KEY: KEY_A });
    const [underA] = sealedKeys();
    expect(createSecretBox(KEY_A).isStale(underA!.sealed_private_jwk)).toBe(false);

    // No OIDC request in between: start-up itself re-seals.
    await start({ SERVICE_ENCRYPTION_KEY: KEY_B, SERVICE_ENCRYPTION_KEYS_PREVIOUS: KEY_A });
    const [underB] = sealedKeys();
    expect(underB?.id).toBe(underA?.id);
    expect(createSecretBox(KEY_B).isStale(underB!.sealed_private_jwk)).toBe(false);

    const last = await start({ SERVICE_ENCRYPTION_KEY: KEY_B });
    const jwks = (await (await fetch(`http://127.0.0.1:${port}/oidc/jwks`)).json()) as {
      keys: Array<{ kid: string }>;
    };
    expect(jwks.keys.map((key) => key.kid)).toEqual([underA!.id]);
    expect(last.stdout() + last.stderr()).not.toContain('OIDC signing keys did not load');
  }, 120_000);
});

describeOnPostgres('OIDC signing keys on a read-only database', () => {
  it('are served from a previous key when the re-seal cannot be written, and re-sealed later', async () => {
    const scratch = await createScratchDatabase();
    const open = () => openStorage({ databaseUrl: scratch.url, timeoutMs: 5000, poolSize: 2 });
    const writable = open();
    try {
      await writable.migrate();
      const key = generateSigningKey();
      const context = `oidc-signing-key:${key.kid}`;
      const sealed = createSecretBox(KEY_A).seal(JSON.stringify(key.privateJwk), context);
      const clock = new FakeClock();
      await writable.insertSigningKey({
        id: key.kid,
        alg: key.alg,
        public_jwk: JSON.stringify(key.publicJwk),
        sealed_private_jwk: sealed,
        created_at: clock.now(),
        activates_at: clock.now(),
      });
      const rotated = createSecretBox(KEY_B, [KEY_A]);
      const load = (store: typeof writable) =>
        publishedSigningKeys({ store, clock, secretBox: rotated }, SIGNING_KEY_RETENTION_MS);

      await asAdmin((admin) =>
        admin.query(`ALTER DATABASE ${scratch.name} SET default_transaction_read_only = on`),
      );
      const readOnly = open();
      try {
        expect((await load(readOnly)).map((k) => k.privateJwk)).toEqual([key.privateJwk]);
      } finally {
        await readOnly.close();
        await asAdmin((admin) =>
          admin.query(`ALTER DATABASE ${scratch.name} RESET default_transaction_read_only`),
        );
      }
      expect((await writable.listSigningKeys())[0]?.sealed_private_jwk).toBe(sealed);
      // Writable again: the next load re-seals it.
      expect((await load(writable)).map((k) => k.kid)).toEqual([key.kid]);
      expect(rotated.isStale((await writable.listSigningKeys())[0]!.sealed_private_jwk)).toBe(
        false,
      );
    } finally {
      await writable.close();
      await scratch.drop();
    }
  });
});
