import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OidcModelRecord } from '../../src/domain/oidc/model.js';
import { OIDC_TOKEN_KINDS } from '../../src/domain/oidc/oidc-store.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import { identityRow, T0 } from '../helpers/records.js';

let counter = 0;
function model(overrides: Partial<OidcModelRecord> = {}): OidcModelRecord {
  counter += 1;
  return {
    kind: 'AuthorizationCode',
    id: `code-${counter}`,
    payload: JSON.stringify({ n: counter }),
    grant_id: null,
    client_id: null,
    uid: null,
    user_code: null,
    consumed_at: null,
    expires_at: T0 + 60_000,
    ...overrides,
  };
}

/** The OIDC tables, one contract on both adapters (migration 0005_oidc). */
describeEachDatabase('oidc store contract', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  it('upserts, finds while live, replaces on a second upsert', async () => {
    const row = model({ grant_id: 'g1', client_id: 'c1', consumed_at: T0 + 1 });
    await store.upsertOidcModel(row);
    expect(await store.findOidcModel(row.kind, row.id, T0)).toEqual(row);
    expect(await store.findOidcModel('AccessToken', row.id, T0)).toBeUndefined();
    expect(await store.findOidcModel(row.kind, row.id, row.expires_at)).toBeUndefined();
    // Every column but the key is replaced, a spent mark cleared too.
    const replaced = {
      ...row,
      payload: '{"n":0}',
      grant_id: 'g2',
      client_id: 'c2',
      uid: 'uid-2',
      user_code: 'CODE-2',
      consumed_at: null,
      expires_at: T0 + 120_000,
    };
    await store.upsertOidcModel(replaced);
    expect(await store.findOidcModel(row.kind, row.id, T0 + 90_000)).toEqual(replaced);
  });

  it('finds by uid and by user code, within a kind', async () => {
    const session = model({ kind: 'Session', uid: 'uid-1' });
    const device = model({ kind: 'DeviceCode', user_code: 'ABCD-EFGH' });
    await store.upsertOidcModel(session);
    await store.upsertOidcModel(device);
    expect(await store.findOidcModelByUid('Session', 'uid-1', T0)).toEqual(session);
    expect(await store.findOidcModelByUid('Grant', 'uid-1', T0)).toBeUndefined();
    expect(await store.findOidcModelByUserCode('DeviceCode', 'ABCD-EFGH', T0)).toEqual(device);
    expect(await store.findOidcModelByUserCode('DeviceCode', 'nope', T0)).toBeUndefined();
  });

  it('consumes once: the first time is kept, and only the first caller is told it won', async () => {
    const row = model();
    await store.upsertOidcModel(row);
    expect(await store.consumeOidcModel(row.kind, row.id, T0 + 1)).toBe(true);
    expect(await store.consumeOidcModel(row.kind, row.id, T0 + 2)).toBe(false);
    expect(await store.consumeOidcModel(row.kind, 'missing', T0 + 2)).toBe(false);
    expect((await store.findOidcModel(row.kind, row.id, T0))?.consumed_at).toBe(T0 + 1);
  });

  it('writes a spend and what it issues in one commit: all for the first caller, nothing for the others', async () => {
    const read = (row: OidcModelRecord) => store.findOidcModel(row.kind, row.id, T0);
    const code = model();
    const stale = model({ kind: 'RefreshToken', payload: '{"n":"before"}' });
    await store.upsertOidcModel(code);
    await store.upsertOidcModel(stale);
    const issued = [
      model({ kind: 'AccessToken' }),
      { ...stale, payload: '{"n":"after"}', grant_id: 'g-after' },
    ];
    expect(await store.writeOidcModels({ kind: code.kind, id: code.id, at: T0 + 1 }, issued)).toBe(
      true,
    );
    expect((await read(code))?.consumed_at).toBe(T0 + 1);
    for (const row of issued) expect(await read(row)).toEqual(row);

    // Spent already, or never there: nothing is written.
    const late = [model({ kind: 'AccessToken' }), { ...stale, payload: '{"n":"late"}' }];
    const spentAgain = { kind: code.kind, id: code.id, at: T0 + 2 };
    expect(await store.writeOidcModels(spentAgain, late)).toBe(false);
    expect(await store.writeOidcModels({ ...spentAgain, id: 'missing' }, late)).toBe(false);
    expect((await read(code))?.consumed_at).toBe(T0 + 1);
    expect(await read(late[0]!)).toBeUndefined();
    expect(await read(stale)).toEqual(issued[1]);

    // Without a spend, the upserts; without upserts, the spend alone.
    const lone = model({ kind: 'AccessToken' });
    expect(await store.writeOidcModels(null, [lone])).toBe(true);
    expect(await read(lone)).toEqual(lone);
    const other = model();
    await store.upsertOidcModel(other);
    const spendOther = { kind: other.kind, id: other.id, at: T0 + 3 };
    expect(await store.writeOidcModels(spendOther, [])).toBe(true);
    expect(await store.writeOidcModels(spendOther, [])).toBe(false);

    // Inside a transaction it joins it: rolled back with it.
    const third = model();
    await store.upsertOidcModel(third);
    const undone = model({ kind: 'AccessToken' });
    await expect(
      store.transaction(async (tx) => {
        expect(
          await tx.writeOidcModels({ kind: third.kind, id: third.id, at: T0 + 4 }, [undone]),
        ).toBe(true);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await read(third))?.consumed_at).toBeNull();
    expect(await read(undone)).toBeUndefined();
  });

  it('destroys one, revokes a grant, a client, and sweeps the expired', async () => {
    const one = model();
    const grantA = [model({ grant_id: 'ga' }), model({ kind: 'RefreshToken', grant_id: 'ga' })];
    const clientB = [model({ client_id: 'cb' }), model({ kind: 'AccessToken', client_id: 'cb' })];
    const old = model({ expires_at: T0 - 1 });
    for (const row of [one, ...grantA, ...clientB, old]) await store.upsertOidcModel(row);
    await store.destroyOidcModel(one.kind, one.id);
    expect(await store.findOidcModel(one.kind, one.id, T0)).toBeUndefined();
    expect(await store.deleteOidcModelsByGrant('ga')).toBe(2);
    expect(await store.deleteOidcModelsByGrant('ga')).toBe(0);
    expect(await store.deleteOidcModelsByClient('cb')).toBe(2);
    expect(await store.deleteExpiredOidcModels(T0)).toBeGreaterThanOrEqual(1);
    expect(await store.findOidcModel(old.kind, old.id, T0 - 10)).toBeUndefined();
  });

  it('keeps clients and signing keys', async () => {
    const client = {
      id: `client-${kind}`,
      name: 'Grafana',
      secret_hash: 'digest',
      token_endpoint_auth_method: 'client_secret_basic' as const,
      redirect_uris: '["https://grafana.example/login/generic_oauth"]',
      post_logout_redirect_uris: '[]',
      first_party: 1,
      created_at: T0,
      revoked_at: null,
    };
    await store.insertOidcClient(client);
    expect(await store.findOidcClient(client.id)).toEqual(client);
    expect(await store.listOidcClients()).toEqual([client]);
    await store.revokeOidcClient(client.id, T0 + 5);
    await store.revokeOidcClient(client.id, T0 + 9);
    expect((await store.findOidcClient(client.id))?.revoked_at).toBe(T0 + 5);

    const key = (id: string, activates_at: number) => ({
      id,
      alg: 'RS256',
      public_jwk: '{}',
      sealed_private_jwk: 'sealed',
      created_at: T0,
      activates_at,
    });
    await store.insertSigningKey(key('k2', T0 + 10));
    await store.insertSigningKey(key('k1', T0));
    expect((await store.listSigningKeys()).map((row) => row.id)).toEqual(['k1', 'k2']);
    expect(await store.deleteSigningKeys(['k1'])).toBe(1);
    expect((await store.listSigningKeys()).map((row) => row.id)).toEqual(['k2']);
    // Re-sealing is conditional on the value read: of two instances, one replaces it.
    expect(await store.resealSigningKey('k2', 'other', 'resealed')).toBe(false);
    expect(await store.resealSigningKey('k2', 'sealed', 'resealed')).toBe(true);
    expect(await store.resealSigningKey('k2', 'sealed', 'resealed-again')).toBe(false);
    expect((await store.listSigningKeys())[0]?.sealed_private_jwk).toBe('resealed');
  });
});

/** The userinfo read (one statement for the token and what the provider finds next). */
describeEachDatabase('oidc store: a code or token with its grant, session and client', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  it('reads a code or token with its grant, session, client and identity, as the single reads answer them', async () => {
    const client = {
      id: `client-${(counter += 1)}`,
      name: 'App',
      secret_hash: 'digest',
      token_endpoint_auth_method: 'client_secret_basic' as const,
      redirect_uris: '["https://app.test/cb"]',
      post_logout_redirect_uris: '[]',
      first_party: 1,
      created_at: T0,
      revoked_at: null,
    };
    await store.insertOidcClient(client);
    const grant = model({ kind: 'Grant', client_id: client.id, expires_at: T0 + 30_000 });
    const session = model({ kind: 'Session', uid: `uid-${counter}`, expires_at: T0 + 45_000 });
    const identity = identityRow();
    await store.insertIdentity(identity);
    const payload = JSON.stringify({
      sessionUid: session.uid,
      grantId: grant.id,
      accountId: identity.id,
    });
    const tokens = OIDC_TOKEN_KINDS.map((kind) => ({
      ...model({ kind, payload, grant_id: grant.id, client_id: client.id }),
      kind,
    }));
    const lone = model({ kind: 'AccessToken', payload: '{}' });
    for (const row of [grant, session, ...tokens, lone]) await store.upsertOidcModel(row);

    const singleReads = async (reader: typeof store, token: OidcModelRecord, now: number) => {
      const found = await reader.findOidcModel(token.kind, token.id, now);
      if (!found) return undefined;
      const [g, s, c, a] = await Promise.all([
        reader.findOidcModel('Grant', grant.id, now),
        reader.findOidcModelByUid('Session', session.uid!, now),
        reader.findOidcClient(client.id),
        reader.findIdentityById(identity.id),
      ]);
      return {
        token: found,
        ...(g ? { grant: g } : {}),
        ...(s ? { session: s } : {}),
        ...(c ? { client: c } : {}),
        ...(a ? { account: a } : {}),
      };
    };
    for (const token of tokens) {
      const { kind } = token;
      // Everything live; the grant expired; the session too; the token itself.
      for (const now of [T0, T0 + 30_000, T0 + 45_000, T0 + 60_000]) {
        const expected = await singleReads(store, token, now);
        expect(await store.findOidcToken(kind, token.id, now)).toEqual(expected);
        // Inside a transaction (SQLite's prepared reads give way to Kysely's; PostgreSQL's
        // transaction store is Kysely's): the same answer.
        expect(await store.transaction((tx) => tx.findOidcToken(kind, token.id, now))).toEqual(
          expected,
        );
      }
      expect(await store.findOidcToken(kind, token.id, T0)).toMatchObject({
        grant,
        session,
        client,
        account: { id: identity.id, username: identity.username },
      });
    }
    // Each kind is read as itself only.
    const [accessToken, code] = tokens;
    expect(await store.findOidcToken('AuthorizationCode', accessToken!.id, T0)).toBeUndefined();
    expect(await store.findOidcToken('AccessToken', code!.id, T0)).toBeUndefined();
    // A revoked client is still read (the adapter refuses it); a token alone comes alone.
    await store.revokeOidcClient(client.id, T0 + 1);
    expect(
      (await store.findOidcToken('AccessToken', accessToken!.id, T0))?.client?.revoked_at,
    ).toBe(T0 + 1);
    expect(await store.findOidcToken('AccessToken', lone.id, T0)).toEqual({ token: lone });
    expect(await store.findOidcToken('AccessToken', 'missing', T0)).toBeUndefined();
    expect(await store.findOidcToken('AccessToken', grant.id, T0)).toBeUndefined();
  });
});
