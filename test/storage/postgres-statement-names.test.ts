import { randomBytes } from 'node:crypto';
import { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { leasedPostgresDialect } from '../../src/storage/postgres/dialect.js';
import { PostgresPool } from '../../src/storage/postgres/pool.js';
import { statementNames } from '../../src/storage/postgres/statement-names.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createTestDatabase, describeOnPostgres, postgresUrl } from '../helpers/databases.js';
import {
  flowRow,
  identityRow,
  serviceTokenRow,
  sessionRow,
  stored,
  T0,
} from '../helpers/records.js';
import { asAdmin } from '../helpers/postgres-admin.js';

describe('statementNames', () => {
  it('names a text the same every time, and two texts apart', () => {
    const nameOf = statementNames();
    const one = nameOf('select "id" from "t" where "id" = $1', 1);
    expect(one).toMatch(/^tessera_[\w-]{32}$/);
    expect(statementNames()('select "id" from "t" where "id" = $1', 1)).toBe(one);
    expect(nameOf('select "a" from "t" where "id" = $1', 1)).not.toBe(one);
  });

  it('leaves unnamed what has no parameter, reads *, or is long', () => {
    const nameOf = statementNames();
    expect(nameOf('begin', 0)).toBeUndefined();
    expect(nameOf('select * from "t" where "id" = $1', 1)).toBeUndefined();
    expect(nameOf('select "t".* from "t" where "id" = $1', 1)).toBeUndefined();
    expect(nameOf(`select "id" from "t" where "id" in (${'$1, '.repeat(2000)}$1)`, 1)).toBe(
      undefined,
    );
  });

  it('names 512 texts at most, and keeps naming those', () => {
    const nameOf = statementNames();
    const text = (i: number) => `select "id" from "t" where "id" = $1 and ${i} = ${i}`;
    const names = Array.from({ length: 520 }, (_, i) => nameOf(text(i), 1));
    expect(names.filter((name) => name !== undefined)).toHaveLength(512);
    expect(nameOf(text(519), 1)).toBeUndefined();
    expect(nameOf(text(3), 1)).toBe(names[3]);
  });
});

interface Scratch {
  t: { id: string; a: string };
}

describeOnPostgres('named statements on PostgreSQL', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('prepares a statement once per connection, and it keeps working after a migration adds a column', async () => {
    const schema = `names_${randomBytes(6).toString('hex')}`;
    await asAdmin((admin) =>
      admin.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (id text PRIMARY KEY, a text)`,
      ),
    );
    cleanup.push(async () => {
      await asAdmin((admin) => admin.query(`DROP SCHEMA ${schema} CASCADE`));
    });
    // One connection, so the statements prepared on it are the ones listed below.
    const pool = new PostgresPool({
      connectionString: postgresUrl,
      timeoutMs: 5000,
      poolSize: 1,
      schema,
    });
    const db = new Kysely<Scratch>({ dialect: leasedPostgresDialect(pool) });
    cleanup.push(() => db.destroy());

    await db.insertInto('t').values({ id: 'x', a: 'first' }).execute();
    const named = () => db.selectFrom('t').select(['id', 'a']).where('id', '=', 'x').execute();
    const starred = () => db.selectFrom('t').selectAll().where('id', '=', 'x').execute();
    for (let i = 0; i < 3; i++) expect(await named()).toEqual([{ id: 'x', a: 'first' }]);
    expect(await starred()).toEqual([{ id: 'x', a: 'first' }]);

    const prepared = await pool.query<{ name: string; statement: string }>({
      text: 'SELECT name, statement FROM pg_prepared_statements ORDER BY statement',
    });
    expect(prepared.rows.map((row) => row.statement)).toEqual([
      'insert into "t" ("id", "a") values ($1, $2)',
      'select "id", "a" from "t" where "id" = $1',
    ]);

    // Another instance upgrading first: the named plan is re-planned by the server, and the
    // `*` read, never prepared, sees the new column instead of failing with 0A000.
    await asAdmin((admin) => admin.query(`ALTER TABLE ${schema}.t ADD COLUMN b text`));
    expect(await named()).toEqual([{ id: 'x', a: 'first' }]);
    expect(await starred()).toEqual([{ id: 'x', a: 'first', b: null }]);
  });
});

describeOnPostgres("the store's own named statements", () => {
  let store: StoreHandle | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('keep answering on every connection after another instance adds a column to their tables', async () => {
    const db = await createTestDatabase('postgres');
    const opened = db.open();
    await opened.migrate();
    store = { ...opened, close: async () => (await opened.close(), await db.drop()) };
    const identity = identityRow();
    await store.insertIdentity(identity);
    const session = sessionRow(identity.id);
    await store.insertSession(stored(session));
    const service = serviceTokenRow();
    await store.insertServiceToken(service);
    const flow = flowRow();
    await store.insertFlow(flow);
    await store.insertTotpFactor({
      identity_id: identity.id,
      secret_sealed: 'sealed',
      confirmed_at: T0,
      last_used_step: null,
      created_at: T0,
    });
    await store.upsertOidcModel({
      kind: 'Session',
      id: 's1',
      payload: '{}',
      grant_id: null,
      client_id: null,
      uid: 'u1',
      user_code: null,
      consumed_at: null,
      expires_at: T0 + 60_000,
    });
    await store.upsertOidcModel({
      kind: 'AccessToken',
      id: 'a1',
      payload: JSON.stringify({ sessionUid: 'u1' }),
      grant_id: null,
      client_id: 'client-1',
      uid: null,
      user_code: null,
      consumed_at: null,
      expires_at: T0 + 60_000,
    });
    await store.insertOidcClient({
      id: 'client-1',
      name: 'App',
      secret_hash: 'digest',
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: '[]',
      post_logout_redirect_uris: '[]',
      first_party: 1,
      created_at: T0,
      revoked_at: null,
    });
    const s = store;
    // Every statement the adapters name themselves, on as many connections as the pool has.
    const readAll = () =>
      Promise.all(
        Array.from({ length: 10 }, () =>
          Promise.all([
            s.findSessionByTokenHash(session.token_hash).then((row) => row?.session.id),
            s.findServiceTokenByHash(service.token_hash).then((row) => row?.id),
            s.findIdentityById(identity.id).then((row) => row?.id),
            s.findIdentityByUsername(identity.username).then((row) => row?.id),
            s.findFlow(flow.id).then((row) => row?.id),
            s.findTotpFactor(identity.id).then((row) => row?.identity_id),
            s.findOidcModel('Session', 's1', T0).then((row) => row?.id),
            s.findOidcModelByUid('Session', 'u1', T0).then((row) => row?.id),
            s.findOidcClient('client-1').then((row) => row?.id),
            s.findOidcToken('AccessToken', 'a1', T0).then((row) => row?.session?.id),
          ]),
        ),
      );
    const expected = [
      session.id,
      service.id,
      identity.id,
      identity.id,
      flow.id,
      identity.id,
      's1',
      's1',
      'client-1',
      's1',
    ];
    expect(new Set((await readAll()).map((row) => JSON.stringify(row)))).toEqual(
      new Set([JSON.stringify(expected)]),
    );
    await asAdmin((admin) =>
      admin.query(
        [
          'identities',
          'sessions',
          'service_tokens',
          'flows',
          'totp_factors',
          'oidc_models',
          'oidc_clients',
        ]
          .map((table) => `ALTER TABLE ${db.schema}.${table} ADD COLUMN added_later text`)
          .join('; '),
      ),
    );
    expect(new Set((await readAll()).map((row) => JSON.stringify(row)))).toEqual(
      new Set([JSON.stringify(expected)]),
    );
  });
});
