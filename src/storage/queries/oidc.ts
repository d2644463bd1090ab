import type { Kysely } from 'kysely';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { OidcClientRecord } from '../../domain/oidc/client.js';
import { IDENTITY_COLUMNS } from './sessions.js';
import type { OidcModelRecord } from '../../domain/oidc/model.js';
import type { OidcStore, OidcTokenRead } from '../../domain/oidc/oidc-store.js';
import type { Database } from '../schema.js';
import { columnsOf } from './columns.js';

/**
 * The columns of the provider's reads, named rather than `*`: on PostgreSQL a statement
 * that names them is prepared once per connection (postgres/statement-names.ts).
 */
export const MODEL_COLUMNS = columnsOf<OidcModelRecord>({
  kind: true,
  id: true,
  payload: true,
  grant_id: true,
  client_id: true,
  uid: true,
  user_code: true,
  consumed_at: true,
  expires_at: true,
});

const CLIENT_COLUMNS = columnsOf<OidcClientRecord>({
  id: true,
  name: true,
  secret_hash: true,
  token_endpoint_auth_method: true,
  redirect_uris: true,
  post_logout_redirect_uris: true,
  first_party: true,
  created_at: true,
  revoked_at: true,
});

/** What an insert of a model row does when the row exists: it replaces it. */
export const UPSERT_CONFLICT = `ON CONFLICT (kind, id) DO UPDATE SET ${MODEL_COLUMNS.filter(
  (column) => column !== 'kind' && column !== 'id',
)
  .map((column) => `${column} = excluded.${column}`)
  .join(', ')}`;

/** A JSON string field of a text column, in each dialect's words (for `oidcSql`). */
export const sqliteJsonField = (column: string, field: string) =>
  `json_extract(${column}, '$.${field}')`;
export const postgresJsonField = (column: string, field: string) =>
  `(${column}::jsonb ->> '${field}')`;

/**
 * The provider's statements on every token request and userinfo call, as plain text for the
 * adapters' prepared statements (sqlite/ and postgres/ prepared-reads and oidc-writes):
 * building them with Kysely cost more than running them. They answer and change what the
 * Kysely versions below do; the store contract suite holds both.
 */
export function oidcSql(
  placeholder: (n: number) => string,
  /** The dialect's text of a JSON string field of `column` (the payload). */
  jsonField: (column: string, field: string) => string,
) {
  const live = `SELECT ${MODEL_COLUMNS.join(', ')} FROM oidc_models WHERE kind = ${placeholder(1)}`;
  const of = (table: string, columns: readonly string[]) =>
    columns.map((column) => `${table}.${column}`);
  return {
    /**
     * Bound as (now, now, kind, id, now); read as arrays, split by `tokenRead`. One
     * statement, so one snapshot: the code or token, then its grant, session, client and
     * identity, each NULLs when absent or expired (the conditions of modelById and
     * modelByUid).
     */
    tokenWithContext: `SELECT ${[
      ...of('t', MODEL_COLUMNS),
      ...of('g', MODEL_COLUMNS),
      ...of('s', MODEL_COLUMNS),
      ...of('c', CLIENT_COLUMNS),
      ...of('i', IDENTITY_COLUMNS),
    ].join(', ')} FROM oidc_models t
      LEFT JOIN oidc_models g ON g.kind = 'Grant' AND g.id = t.grant_id AND g.expires_at > ${placeholder(1)}
      LEFT JOIN oidc_models s ON s.kind = 'Session' AND s.uid = ${jsonField('t.payload', 'sessionUid')} AND s.expires_at > ${placeholder(2)}
      LEFT JOIN oidc_clients c ON c.id = t.client_id
      LEFT JOIN identities i ON i.id = ${jsonField('t.payload', 'accountId')}
      WHERE t.kind = ${placeholder(3)} AND t.id = ${placeholder(4)} AND t.expires_at > ${placeholder(5)}`,
    /** Bound as (kind, id, now). */
    modelById: `${live} AND id = ${placeholder(2)} AND expires_at > ${placeholder(3)}`,
    /** Bound as (kind, uid, now): the provider's session, which every token bound to it checks. */
    modelByUid: `${live} AND uid = ${placeholder(2)} AND expires_at > ${placeholder(3)}`,
    clientById: `SELECT ${CLIENT_COLUMNS.join(', ')} FROM oidc_clients WHERE id = ${placeholder(1)}`,
    /** Bound as the record's MODEL_COLUMNS, in order. */
    upsertModel: `INSERT INTO oidc_models (${MODEL_COLUMNS.join(', ')}) VALUES (${MODEL_COLUMNS.map((_, i) => placeholder(i + 1)).join(', ')}) ${UPSERT_CONFLICT}`,
    /** Bound as (at, kind, id): only the first caller changes the row. */
    consumeModel: `UPDATE oidc_models SET consumed_at = ${placeholder(1)} WHERE kind = ${placeholder(2)} AND id = ${placeholder(3)} AND consumed_at IS NULL`,
  };
}

/** Splits a row of `tokenWithContext` (read as an array) into its records. */
export function tokenRead(row: readonly unknown[]): OidcTokenRead {
  const model = (from: number) => recordOf<OidcModelRecord>(MODEL_COLUMNS, row, from);
  const token = model(0)!;
  const grant = model(MODEL_COLUMNS.length);
  const session = model(2 * MODEL_COLUMNS.length);
  const clientFrom = 3 * MODEL_COLUMNS.length;
  const client = recordOf<OidcClientRecord>(CLIENT_COLUMNS, row, clientFrom);
  const account = recordOf<IdentityRecord>(
    IDENTITY_COLUMNS,
    row,
    clientFrom + CLIENT_COLUMNS.length,
  );
  return found({ token, grant, session, client, account });
}

/** The read without the parts that were not found. */
function found(parts: {
  token: OidcModelRecord;
  grant: OidcModelRecord | undefined;
  session: OidcModelRecord | undefined;
  client: OidcClientRecord | undefined;
  account: IdentityRecord | undefined;
}): OidcTokenRead {
  return Object.fromEntries(
    Object.entries(parts).filter(([, value]) => value !== undefined),
  ) as unknown as OidcTokenRead;
}

/** The record whose columns start at `from`, or undefined when the join found none (NULL id). */
function recordOf<R>(
  columns: readonly string[],
  row: readonly unknown[],
  from: number,
): R | undefined {
  if (row[from + columns.indexOf('id')] === null) return undefined;
  const record: Record<string, unknown> = {};
  columns.forEach((column, i) => (record[column] = row[from + i]));
  return record as R;
}

/** An OIDC model row's values in the order `upsertModel` binds them. */
export const modelValues = (record: OidcModelRecord) =>
  MODEL_COLUMNS.map((column) => record[column]);

async function upsert(db: Kysely<Database>, record: OidcModelRecord): Promise<void> {
  const changes = {
    payload: record.payload,
    grant_id: record.grant_id,
    client_id: record.client_id,
    uid: record.uid,
    user_code: record.user_code,
    consumed_at: record.consumed_at,
    expires_at: record.expires_at,
  };
  await db
    .insertInto('oidc_models')
    .values(record)
    .onConflict((conflict) => conflict.columns(['kind', 'id']).doUpdateSet(changes))
    .execute();
}

/** Only the first caller changes the row: true for it alone. */
async function consume(db: Kysely<Database>, kind: string, id: string, at: number) {
  const result = await db
    .updateTable('oidc_models')
    .set({ consumed_at: at })
    .where('kind', '=', kind)
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function oidcQueries(db: Kysely<Database>): OidcStore {
  const live = (kind: string, now: number) =>
    db
      .selectFrom('oidc_models')
      .select(MODEL_COLUMNS)
      .where('kind', '=', kind)
      .where('expires_at', '>', now);
  return {
    async upsertOidcModel(record) {
      await upsert(db, record);
    },
    async writeOidcModels(spend, upserts) {
      const write = async (tx: Kysely<Database>) => {
        if (spend && !(await consume(tx, spend.kind, spend.id, spend.at))) return false;
        for (const record of upserts) await upsert(tx, record);
        return true;
      };
      return db.isTransaction ? write(db) : db.transaction().execute(write);
    },
    findOidcModel(kind, id, now) {
      return live(kind, now).where('id', '=', id).executeTakeFirst();
    },
    findOidcModelByUid(kind, uid, now) {
      return live(kind, now).where('uid', '=', uid).executeTakeFirst();
    },
    async findOidcToken(kind, id, now) {
      const token = await live(kind, now).where('id', '=', id).executeTakeFirst();
      if (!token) return undefined;
      const { sessionUid, accountId } = JSON.parse(token.payload) as {
        sessionUid?: unknown;
        accountId?: unknown;
      };
      const [grant, session, client, account] = await Promise.all([
        token.grant_id === null
          ? undefined
          : live('Grant', now).where('id', '=', token.grant_id).executeTakeFirst(),
        typeof sessionUid === 'string'
          ? live('Session', now).where('uid', '=', sessionUid).executeTakeFirst()
          : undefined,
        token.client_id === null
          ? undefined
          : db
              .selectFrom('oidc_clients')
              .select(CLIENT_COLUMNS)
              .where('id', '=', token.client_id)
              .executeTakeFirst(),
        typeof accountId === 'string'
          ? db
              .selectFrom('identities')
              .select(IDENTITY_COLUMNS)
              .where('id', '=', accountId)
              .executeTakeFirst()
          : undefined,
      ]);
      return found({ token, grant, session, client, account });
    },
    findOidcModelByUserCode(kind, userCode, now) {
      return live(kind, now).where('user_code', '=', userCode).executeTakeFirst();
    },
    consumeOidcModel: (kind, id, at) => consume(db, kind, id, at),
    async destroyOidcModel(kind, id) {
      await db.deleteFrom('oidc_models').where('kind', '=', kind).where('id', '=', id).execute();
    },
    async deleteOidcModelsByGrant(grantId) {
      const result = await db
        .deleteFrom('oidc_models')
        .where('grant_id', '=', grantId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async deleteOidcModelsByClient(clientId) {
      const result = await db
        .deleteFrom('oidc_models')
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async deleteExpiredOidcModels(now) {
      const result = await db
        .deleteFrom('oidc_models')
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async insertOidcClient(record) {
      await db.insertInto('oidc_clients').values(record).execute();
    },
    findOidcClient(id) {
      return db
        .selectFrom('oidc_clients')
        .select(CLIENT_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst();
    },
    listOidcClients() {
      return db
        .selectFrom('oidc_clients')
        .selectAll()
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    },
    async revokeOidcClient(id, at) {
      await db
        .updateTable('oidc_clients')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .execute();
    },

    async insertSigningKey(record) {
      await db.insertInto('oidc_signing_keys').values(record).execute();
    },
    listSigningKeys() {
      return db
        .selectFrom('oidc_signing_keys')
        .selectAll()
        .orderBy('activates_at')
        .orderBy('created_at')
        .execute();
    },
    async deleteSigningKeys(ids) {
      const result = await db
        .deleteFrom('oidc_signing_keys')
        .where('id', 'in', [...ids])
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async resealSigningKey(id, previous, sealed) {
      const result = await db
        .updateTable('oidc_signing_keys')
        .set({ sealed_private_jwk: sealed })
        .where('id', '=', id)
        .where('sealed_private_jwk', '=', previous)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
