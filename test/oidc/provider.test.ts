import BetterSqlite3 from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import * as rp from 'openid-client';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateSigningKey } from '../../src/adapters/oidc-signing-key.js';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { listOidcClients, revokeOidcClient } from '../../src/domain/oidc/client-service.js';
import { SIGNING_KEY_RETENTION_MS } from '../../src/domain/oidc/lifetimes.js';
import type { OidcTokenRead } from '../../src/domain/oidc/oidc-store.js';
import {
  KEY_ACTIVATION_DELAY_MS,
  KEY_REFRESH_MS,
  listSigningKeys,
  rotateSigningKey,
} from '../../src/domain/oidc/signing-keys.js';
import { sweep } from '../../src/domain/sweep.js';
import { newId } from '../../src/lib/ids.js';
import { hashToken, tokenShape } from '../../src/lib/tokens.js';
import { describeEachDatabase, type TestDatabase } from '../helpers/databases.js';
import { recordStoreCalls } from '../helpers/store-calls.js';
import { addClient, addUser, PASSWORD, startOidcApp, type OidcApp } from './helpers.js';
import { authorizeSignedIn, CookieJar } from './http-flow.js';
import { jwtHeader, redeem, relyingParty } from './relying-party.js';

const ACTOR = { service_name: 'oidc-tests', service_id: null };

/** The OAuth error code of an openid-client failure, from its body or its challenge. */
async function oauthError(promise: Promise<unknown>): Promise<string> {
  const error = (await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (caught: unknown) => caught,
  )) as { error?: string; cause?: Array<{ parameters?: { error?: string } }> };
  return error.error ?? error.cause?.[0]?.parameters?.error ?? String(error);
}
const CALLBACK = 'https://app.example/callback';

/**
 * A trigger making the database refuse to write provider models of `kind` (a real failure
 * of the write, on either database); the answer drops it.
 */
async function refuseRows(db: TestDatabase, kind: string): Promise<() => Promise<void>> {
  if (db.kind === 'sqlite') {
    const raw = new BetterSqlite3(db.file!);
    raw.exec(`CREATE TRIGGER refuse_models BEFORE INSERT ON oidc_models
      WHEN NEW.kind = '${kind}' BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    return async () => {
      raw.exec('DROP TRIGGER refuse_models');
      raw.close();
    };
  }
  const client = new pg.Client({ connectionString: db.databaseUrl });
  await client.connect();
  await client.query(`CREATE FUNCTION ${db.schema}.refuse_models() RETURNS trigger
    LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
  await client.query(`CREATE TRIGGER refuse_models BEFORE INSERT ON ${db.schema}.oidc_models
    FOR EACH ROW WHEN (NEW.kind = '${kind}') EXECUTE FUNCTION ${db.schema}.refuse_models()`);
  return async () => {
    await client.query(`DROP FUNCTION ${db.schema}.refuse_models() CASCADE`);
    await client.end();
  };
}

/** One character changed mid-secret: still the shape of a secret. */
function typo(secret: string): string {
  const at = 20;
  return secret.slice(0, at) + (secret[at] === 'Q' ? 'R' : 'Q') + secret.slice(at + 1);
}

/** The provider's rules over HTTP, with openid-client as the relying party, on both databases. */
describeEachDatabase('OIDC provider', (kind) => {
  let t: OidcApp;
  let session: string;
  let identityId: string;

  beforeAll(async () => {
    t = await startOidcApp(kind);
    identityId = (await addUser(t)).id;
    const direct = await t.token('direct_auth');
    const signedIn = await t.call('POST', '/v1/authenticate/password', direct, {
      username: 'alice',
      password: PASSWORD,
    });
    session = (signedIn.json() as { token: string }).token;
  });
  afterAll(() => t?.close());

  async function firstPartyClient(name = 'Grafana') {
    const created = await addClient(t, { name, redirectUris: [CALLBACK], firstParty: true });
    const config = await relyingParty(t.issuer, created.client.client_id, created.client_secret);
    return { ...created, config };
  }

  async function signInWith(config: rp.Configuration, scope?: string) {
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, session, scope);
    return redeem(config, auth, landedOn);
  }

  it('keeps only the digest of a client secret, and refuses a wrong one', async () => {
    const { client, client_secret: secret } = await firstPartyClient();
    expect(secret).toMatch(/^tess_ocs_[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/);
    const stored = await t.deps.store.findOidcClient(client.client_id);
    expect(stored?.secret_hash).toBe(`crc32:${hashToken(secret!)}`);
    expect(JSON.stringify(stored)).not.toContain(secret!);

    const wrong = await relyingParty(t.issuer, client.client_id, `${secret}x`);
    const { auth, landedOn } = await authorizeSignedIn(wrong, CALLBACK, session);
    expect(await oauthError(redeem(wrong, auth, landedOn))).toBe('invalid_client');
    // The same browser step with the right secret works.
    const right = await relyingParty(t.issuer, client.client_id, secret);
    const again = await authorizeSignedIn(right, CALLBACK, session);
    expect((await redeem(right, again.auth, again.landedOn)).claims()?.sub).toBe(identityId);
  });

  it('checksums client secrets: a broken checksum is refused, a pre-checksum secret still works', async () => {
    const { client, client_secret: secret, config } = await firstPartyClient('Checksummed');
    expect(tokenShape('oidcClientSecret', secret)).toBe('crc32');
    expect(client.secret_format).toBe('crc32');
    expect((await signInWith(config)).claims()?.sub).toBe(identityId);
    // One character off: the shape of a secret, but its checksum fails.
    const mistyped = await relyingParty(t.issuer, client.client_id, typo(secret!));
    const first = await authorizeSignedIn(mistyped, CALLBACK, session);
    expect(await oauthError(redeem(mistyped, first.auth, first.landedOn))).toBe('invalid_client');

    // A client as a version before checksums stored it: 32 random bytes, the bare digest.
    const old = `tess_ocs_${randomBytes(32).toString('base64url')}`;
    const id = newId();
    await t.deps.store.insertOidcClient({
      id,
      name: 'Before checksums',
      secret_hash: hashToken(old),
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: JSON.stringify([CALLBACK]),
      post_logout_redirect_uris: '[]',
      first_party: 1,
      created_at: t.clock.now(),
      revoked_at: null,
    });
    const listed = (await listOidcClients(t.deps.store)).find((row) => row.client_id === id);
    expect(listed?.secret_format).toBe('legacy');
    const legacy = await relyingParty(t.issuer, id, old);
    const tokens = await signInWith(legacy);
    expect(tokens.claims()?.sub).toBe(identityId);
    expect((await rp.refreshTokenGrant(legacy, tokens.refresh_token!)).access_token).toBeTruthy();
    const legacyTypo = await relyingParty(t.issuer, id, typo(old));
    const second = await authorizeSignedIn(legacyTypo, CALLBACK, session);
    expect(await oauthError(redeem(legacyTypo, second.auth, second.landedOn))).toBe(
      'invalid_client',
    );
  });

  it('requires S256 PKCE of public clients, and a code is redeemed once', async () => {
    const { client } = await addClient(t, {
      redirectUris: [CALLBACK],
      public: true,
      firstParty: true,
    });
    const config = await relyingParty(t.issuer, client.client_id, null);
    const withoutPkce = new URL(`${t.issuer}/auth`);
    withoutPkce.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'openid',
    }).toString();
    const refused = await fetch(withoutPkce, { redirect: 'manual' });
    const location = new URL(refused.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(CALLBACK);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);

    const plain = new URL(withoutPkce);
    plain.searchParams.set('code_challenge', 'a'.repeat(43));
    plain.searchParams.set('code_challenge_method', 'plain');
    const plainRefused = await fetch(plain, { redirect: 'manual' });
    expect(new URL(plainRefused.headers.get('location')!).searchParams.get('error')).toBe(
      'invalid_request',
    );

    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, session);
    expect((await redeem(config, auth, landedOn)).claims()?.sub).toBe(identityId);
    await expect(redeem(config, auth, landedOn)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('audits token calls, and a revoked client loses its tokens at once', async () => {
    const { client, config } = await firstPartyClient('Wiki');
    const tokens = await signInWith(config);
    await t.deps.audit.flush();
    const rows = await t.deps.store.listAuditRecords(50, { actions: ['oidc_token', 'oidc_login'] });
    const forClient = rows.filter((row) => row.details.includes(client.client_id));
    expect(forClient.map((row) => row.action).sort()).toEqual(['oidc_login', 'oidc_token']);
    expect(forClient.find((row) => row.action === 'oidc_token')).toMatchObject({
      outcome: 'ok',
      target_identity: identityId,
    });

    const revoked = await revokeOidcClient(t.deps, ACTOR, client.client_id);
    expect(revoked.tokens_removed).toBeGreaterThan(0);
    expect(await oauthError(rp.refreshTokenGrant(config, tokens.refresh_token!))).toBe(
      'invalid_client',
    );
    await expect(rp.fetchUserInfo(config, tokens.access_token, identityId)).rejects.toMatchObject({
      status: 401,
    });
    const [row] = await t.deps.store.listAuditRecords(1, { actions: ['oidc_client_revoke'] });
    expect(JSON.parse(row!.details)).toMatchObject({ client_id: client.client_id });
  });

  it('userinfo reads the token, its grant, session, client and identity in one statement; ending any of them still ends the token', async () => {
    const { config } = await firstPartyClient('Reader');
    const store = t.deps.store;
    const calls = recordStoreCalls(store);
    const ends: ((read: OidcTokenRead) => Promise<unknown>)[] = [
      (read) => store.destroyOidcModel('Grant', read.grant!.id),
      (read) => store.destroyOidcModel('Session', read.session!.id),
      // Revoked in the registry only (the CLI also deletes the client's tokens).
      (read) => store.revokeOidcClient(read.client!.id, t.clock.now()),
    ];
    for (const end of ends) {
      const tokens = await signInWith(config);
      calls.reset();
      const info = await rp.fetchUserInfo(config, tokens.access_token, identityId);
      expect(info.sub).toBe(identityId);
      expect(calls.count('findOidcToken')).toBe(1);
      expect(
        calls.count('findOidcModel', 'findOidcModelByUid', 'findOidcClient', 'findIdentityById'),
      ).toBe(0);
      const read = await store.findOidcToken('AccessToken', tokens.access_token, t.clock.now());
      expect(read).toMatchObject({
        grant: {},
        session: {},
        client: { revoked_at: null },
        account: { id: identityId, state: 'active' },
      });
      await end(read!);
      await expect(rp.fetchUserInfo(config, tokens.access_token, identityId)).rejects.toMatchObject(
        { status: 401 },
      );
    }
  });

  it('the token endpoint reads a code or refresh token with its grant, session and identity in one statement and writes in one commit; ending either still refuses the code', async () => {
    const { config } = await firstPartyClient('Exchanger');
    const store = t.deps.store;
    const calls = recordStoreCalls(store);
    const separateReads = () =>
      calls.count('findOidcModel', 'findOidcModelByUid', 'findIdentityById');
    const first = await authorizeSignedIn(config, CALLBACK, session);
    calls.reset();
    const tokens = await redeem(config, first.auth, first.landedOn);
    expect(tokens.claims()?.sub).toBe(identityId);
    expect(calls.count('findOidcToken')).toBe(1);
    expect(separateReads()).toBe(0);
    // The code spent and both tokens issued: one commit.
    expect(calls.count('writeOidcModels')).toBe(1);
    expect(calls.count('consumeOidcModel', 'upsertOidcModel')).toBe(0);
    calls.reset();
    const refreshed = await rp.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.claims()?.sub).toBe(identityId);
    expect(calls.count('findOidcToken')).toBe(1);
    expect(separateReads()).toBe(0);
    expect(calls.count('writeOidcModels')).toBe(1);
    expect(calls.count('consumeOidcModel', 'upsertOidcModel')).toBe(0);

    const ends: ((read: OidcTokenRead) => Promise<unknown>)[] = [
      (read) => store.destroyOidcModel('Grant', read.grant!.id),
      (read) => store.destroyOidcModel('Session', read.session!.id),
    ];
    for (const end of ends) {
      const next = await authorizeSignedIn(config, CALLBACK, session);
      const code = new URL(next.landedOn).searchParams.get('code')!;
      const read = await store.findOidcToken('AuthorizationCode', code, t.clock.now());
      expect(read).toMatchObject({ grant: {}, session: {}, account: { id: identityId } });
      await end(read!);
      expect(await oauthError(redeem(config, next.auth, next.landedOn))).toBe('invalid_grant');
    }
  });

  it('a token request writes all or nothing: a failed write answers server_error and leaves the code unspent', async () => {
    const { config } = await firstPartyClient('All or nothing');
    const next = await authorizeSignedIn(config, CALLBACK, session);
    const code = new URL(next.landedOn).searchParams.get('code')!;
    const grantId = (await t.deps.store.findOidcModel('AuthorizationCode', code, t.clock.now()))!
      .grant_id!;
    // The database refuses the refresh token, the last of the three writes.
    const allow = await refuseRows(t.db, 'RefreshToken');
    try {
      // openid-client reads no body of a 500: the provider's error is in the response.
      const failed = (await redeem(config, next.auth, next.landedOn).catch((e: unknown) => e)) as {
        cause: Response;
      };
      expect(failed.cause.status).toBe(500);
      expect(await failed.cause.json()).toEqual({
        error: 'server_error',
        error_description: 'oops! something went wrong',
      });
    } finally {
      await allow();
    }
    const spent = await t.deps.store.findOidcModel('AuthorizationCode', code, t.clock.now());
    expect(spent?.consumed_at).toBeNull();
    // Redeemed again, it works; the grant holds the code and the one pair issued now.
    expect((await redeem(config, next.auth, next.landedOn)).claims()?.sub).toBe(identityId);
    expect(await t.deps.store.deleteOidcModelsByGrant(grantId)).toBe(3);
  });

  it("follows the browser's Tessera session: another user, or none, is not the old one", async () => {
    const { config } = await firstPartyClient('Shared browser');
    const carol = await addUser(t, 'carol');
    const direct = await t.token('direct_auth');
    const carolSession = (
      (
        await t.call('POST', '/v1/authenticate/password', direct, {
          username: 'carol',
          password: PASSWORD,
        })
      ).json() as { token: string }
    ).token;
    const jar = new CookieJar();
    const first = await authorizeSignedIn(config, CALLBACK, session, undefined, jar);
    expect((await redeem(config, first.auth, first.landedOn)).claims()?.sub).toBe(identityId);
    // The provider's own session cookie stays; the Tessera one now belongs to carol.
    expect(jar.names()).toContain('tessera_oidc_session');
    const switched = await authorizeSignedIn(config, CALLBACK, carolSession, undefined, jar);
    expect((await redeem(config, switched.auth, switched.landedOn)).claims()?.sub).toBe(carol.id);
    // The provider ended its own session for the switch, never carol's Tessera session.
    const whoami = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      cookies: { service_session: carolSession },
    });
    expect(whoami.json()).toMatchObject({ identity: { username: 'carol' } });
    // Signed out of Tessera: the provider session alone signs nobody in.
    await expect(authorizeSignedIn(config, CALLBACK, null, undefined, jar)).rejects.toThrow(
      /stopped at .*\/v1\/login/,
    );
  });

  it('stops answering for a disabled identity', async () => {
    const bob = await addUser(t, 'bob');
    const direct = await t.token('direct_auth');
    const signedIn = await t.call('POST', '/v1/authenticate/password', direct, {
      username: 'bob',
      password: PASSWORD,
    });
    const bobSession = (signedIn.json() as { token: string }).token;
    const { config } = await firstPartyClient('Bob app');
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, bobSession);
    const tokens = await redeem(config, auth, landedOn);
    const unspent = await authorizeSignedIn(config, CALLBACK, bobSession);
    await setIdentityState(t.deps, ACTOR, bob.id, 'disabled');
    await expect(rp.fetchUserInfo(config, tokens.access_token, bob.id)).rejects.toBeTruthy();
    await expect(rp.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // A code issued before the disable is refused too.
    expect(await oauthError(redeem(config, unspent.auth, unspent.landedOn))).toBe('invalid_grant');
  });

  it('rotates keys: published at once, signing after the delay, unpublished after retention', async () => {
    const rotating = await firstPartyClient('Rotating');
    const { config } = rotating;
    const before = jwtHeader((await signInWith(config)).id_token!).kid!;
    const jwksOf = async () =>
      ((await (await fetch(`${t.issuer}/jwks`)).json()) as { keys: { kid: string }[] }).keys.map(
        (key) => key.kid,
      );

    const first = await rotateSigningKey(
      t.deps,
      ACTOR,
      generateSigningKey,
      SIGNING_KEY_RETENTION_MS,
    );
    t.clock.advance(1000);
    const second = await rotateSigningKey(
      t.deps,
      ACTOR,
      generateSigningKey,
      SIGNING_KEY_RETENTION_MS,
    );
    expect([first.state, second.state]).toEqual(['next', 'next']);
    // Within KEY_REFRESH_MS every instance picks the new keys up by itself.
    t.clock.advance(KEY_REFRESH_MS);
    expect(await jwksOf()).toEqual([before, first.kid, second.kid]);
    expect(jwtHeader((await signInWith(config)).id_token!).kid).toBe(before);

    t.clock.advance(KEY_ACTIVATION_DELAY_MS);
    await t.app.oidc!.refresh();
    // A relying party that fetched the JWKS before the rotation refetches on an unknown kid
    // (after a 30 s cool-down in openid-client); this one starts afresh.
    const fresh = await relyingParty(t.issuer, rotating.client.client_id, rotating.client_secret);
    const after = await signInWith(fresh);
    expect(jwtHeader(after.id_token!).kid).toBe(second.kid);
    expect(
      (await listSigningKeys(t.deps, SIGNING_KEY_RETENTION_MS)).map((key) => key.state),
    ).toEqual(['retired', 'retired', 'active']);
    expect(await jwksOf()).toEqual([second.kid, before, first.kid]);

    t.clock.advance(SIGNING_KEY_RETENTION_MS);
    const swept = await sweep(t.deps.store, t.deps.clock, { oidc: true });
    expect(swept.oidc_keys).toBe(2);
    await t.app.oidc!.refresh();
    expect(await jwksOf()).toEqual([second.kid]);
    // The old tokens' replacements are still signed and verifiable.
    const refreshed = await rp.refreshTokenGrant(fresh, after.refresh_token!);
    expect(jwtHeader(refreshed.id_token!).kid).toBe(second.kid);
  });

  it('answers prompt=login only with a session made after the request began', async () => {
    const { config } = await firstPartyClient('Strict');
    const direct = await t.token('direct_auth');
    // A session made a minute before the request, by the wall clock the provider uses.
    const offset = Date.now() - 60_000 - t.clock.now();
    t.clock.advance(offset);
    try {
      const minted = await t.call('POST', '/v1/authenticate/password', direct, {
        username: 'alice',
        password: PASSWORD,
      });
      const earlier = (minted.json() as { token: string }).token;
      // Without prompt=login that session is enough; with it, the user signs in again.
      const plain = await authorizeSignedIn(config, CALLBACK, earlier);
      expect((await redeem(config, plain.auth, plain.landedOn)).claims()?.sub).toBe(identityId);
      await expect(
        authorizeSignedIn(config, CALLBACK, earlier, undefined, new CookieJar(), {
          prompt: 'login',
        }),
      ).rejects.toThrow(/stopped at .*\/v1\/login/);
    } finally {
      t.clock.advance(-offset);
    }
  });

  it("answers an unknown path under the issuer in Tessera's error model", async () => {
    const res = await fetch(`${t.issuer}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'not_found' });
    const expired = await fetch(`${t.issuer}/interaction/unknown`, {
      headers: { accept: 'text/html' },
    });
    expect(expired.status).toBe(404);
    expect(await expired.text()).toContain('expired or was already completed');
  });
});
