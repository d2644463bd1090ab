import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OidcClientRecord } from '../../src/domain/oidc/client.js';
import type { OidcModelRecord } from '../../src/domain/oidc/model.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import { identityRow, serviceTokenRow, sessionRow, stored, T0 } from '../helpers/records.js';

/**
 * The session-check reads run as prepared statements outside Kysely (storage/sqlite and
 * storage/postgres prepared-reads). They must answer exactly what the transaction's own
 * (Kysely) store answers, see every committed change at once, and never see rows of a
 * transaction that is still open.
 */
describeEachDatabase('prepared session-check reads', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  it('return the same rows as the queries inside a transaction', async () => {
    const identity = identityRow({ avatar_url: 'https://example.org/a.png' });
    await store.insertIdentity(identity);
    const session = sessionRow(identity.id, { authenticated_via: 'link' });
    await store.insertSession(stored(session));
    const service = serviceTokenRow();
    await store.insertServiceToken(service);

    const inside = await store.transaction(async (tx) => ({
      session: await tx.findSessionByTokenHash(session.token_hash),
      service: await tx.findServiceTokenByHash(service.token_hash),
      identity: await tx.findIdentityById(identity.id),
    }));
    expect(await store.findSessionByTokenHash(session.token_hash)).toEqual(inside.session);
    expect(await store.findServiceTokenByHash(service.token_hash)).toEqual(inside.service);
    expect(await store.findIdentityById(identity.id)).toEqual(inside.identity);
    expect(inside.session?.identity).toEqual({ ...identity, password_hash: null });
    expect(await store.findSessionByTokenHash('unknown')).toBeUndefined();
    expect(await store.findServiceTokenByHash('unknown')).toBeUndefined();
    expect(await store.findIdentityById(identityRow().id)).toBeUndefined();
  });

  it('see a revocation and a disable on the very next read', async () => {
    const identity = identityRow();
    await store.insertIdentity(identity);
    const session = sessionRow(identity.id);
    await store.insertSession(stored(session));
    expect((await store.findSessionByTokenHash(session.token_hash))?.session.revoked_at).toBe(null);
    await store.revokeSessionByTokenHash(session.token_hash, T0 + 1);
    expect((await store.findSessionByTokenHash(session.token_hash))?.session.revoked_at).toBe(
      T0 + 1,
    );
    await store.setIdentityState(identity.id, 'disabled', T0 + 2);
    expect((await store.findSessionByTokenHash(session.token_hash))?.identity.state).toBe(
      'disabled',
    );
    expect((await store.findIdentityById(identity.id))?.state).toBe('disabled');
  });

  it('never see the rows of a transaction that is still open', async () => {
    const identity = identityRow();
    const session = sessionRow(identity.id);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const ready = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = store.transaction(async (tx) => {
      await tx.insertIdentity(identity);
      await tx.insertSession(stored(session));
      inserted();
      await held;
      throw new Error('roll back');
    });
    await ready;
    // Read while the transaction is open. On SQLite (one connection shared with Kysely) the
    // read must not run inside that transaction; it waits for it or reads committed data.
    const during = Promise.all([
      store.findSessionByTokenHash(session.token_hash),
      store.findIdentityById(identity.id),
    ]);
    release();
    await expect(transaction).rejects.toThrow('roll back');
    expect(await during).toEqual([undefined, undefined]);
    expect(await store.findSessionByTokenHash(session.token_hash)).toBeUndefined();
  });
});

describeEachDatabase('prepared OpenID provider reads', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  const model = (id: string, consumed_at: number | null = null): OidcModelRecord => ({
    kind: 'AuthorizationCode',
    id,
    payload: JSON.stringify({ id }),
    grant_id: 'grant-1',
    client_id: 'client-1',
    uid: null,
    user_code: null,
    consumed_at,
    expires_at: T0 + 60_000,
  });
  const client: OidcClientRecord = {
    id: 'client-1',
    name: 'App',
    secret_hash: 'digest',
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: '["https://app.example/cb"]',
    post_logout_redirect_uris: '[]',
    first_party: 1,
    created_at: T0,
    revoked_at: null,
  };

  it('return the same rows as the queries inside a transaction, live models only', async () => {
    await store.upsertOidcModel(model('code-1', T0 + 5));
    const session = { ...model('session-1'), kind: 'Session', uid: 'uid-1', grant_id: null };
    await store.upsertOidcModel(session);
    await store.insertOidcClient(client);
    const inside = await store.transaction(async (tx) => ({
      model: await tx.findOidcModel('AuthorizationCode', 'code-1', T0),
      session: await tx.findOidcModelByUid('Session', 'uid-1', T0),
      client: await tx.findOidcClient('client-1'),
    }));
    expect(inside.model).toEqual(model('code-1', T0 + 5));
    expect(inside.session).toEqual(session);
    expect(inside.client).toEqual(client);
    expect(await store.findOidcModel('AuthorizationCode', 'code-1', T0)).toEqual(inside.model);
    expect(await store.findOidcModelByUid('Session', 'uid-1', T0)).toEqual(inside.session);
    expect(await store.findOidcClient('client-1')).toEqual(inside.client);
    expect(await store.findOidcModelByUid('Grant', 'uid-1', T0)).toBeUndefined();
    expect(await store.findOidcModelByUid('Session', 'uid-1', T0 + 60_000)).toBeUndefined();
    // Another kind, an unknown id, an expired model: nothing.
    expect(await store.findOidcModel('AccessToken', 'code-1', T0)).toBeUndefined();
    expect(await store.findOidcModel('AuthorizationCode', 'code-2', T0)).toBeUndefined();
    expect(await store.findOidcModel('AuthorizationCode', 'code-1', T0 + 60_000)).toBeUndefined();
    expect(await store.findOidcClient('client-2')).toBeUndefined();
  });

  it('see a consumption at once and never the rows of an open transaction', async () => {
    await store.upsertOidcModel(model('code-3'));
    expect(await store.consumeOidcModel('AuthorizationCode', 'code-3', T0 + 7)).toBe(true);
    expect((await store.findOidcModel('AuthorizationCode', 'code-3', T0))?.consumed_at).toBe(
      T0 + 7,
    );
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const ready = new Promise<void>((resolve) => (written = resolve));
    const transaction = store.transaction(async (tx) => {
      await tx.upsertOidcModel(model('code-4'));
      written();
      await held;
      throw new Error('roll back');
    });
    await ready;
    const during = store.findOidcModel('AuthorizationCode', 'code-4', T0);
    release();
    await expect(transaction).rejects.toThrow('roll back');
    expect(await during).toBeUndefined();
  });
});
