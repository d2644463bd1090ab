import { type Kysely, sql } from 'kysely';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { SessionListing, SessionRecord } from '../../domain/sessions/session.js';
import type { SessionStore, SessionWithIdentity } from '../../domain/sessions/session-store.js';
import type { Database } from '../schema.js';
import { columnsOf } from './columns.js';
import { onPostgres } from './dialect.js';

/**
 * The columns of the session check (the session joined with its identity, never the
 * password hash), in the order of `SessionCheckTuple`. The prepared statements read the row
 * as an array: building an object per row cost the driver more than the lookup itself.
 */
const SESSION_CHECK_COLUMNS = [
  's.id',
  's.identity_id',
  's.authenticated_via',
  's.issued_at',
  's.expires_at',
  's.revoked_at',
  's.last_used_at',
  's.aal',
  'i.username',
  'i.display_name',
  'i.avatar_url',
  'i.email',
  'i.email_verified_at',
  'i.state',
  'i.created_at',
  'i.updated_at',
] as const;

/** The session check's row read as an array, in the order of SESSION_CHECK_COLUMNS. */
export type SessionCheckTuple = [
  id: string,
  identity_id: string,
  authenticated_via: SessionRecord['authenticated_via'],
  issued_at: number,
  expires_at: number,
  revoked_at: number | null,
  last_used_at: number | null,
  aal: SessionRecord['aal'],
  // The identity's public profile, never the password hash.
  username: string,
  display_name: string,
  avatar_url: string | null,
  email: string | null,
  email_verified_at: number | null,
  state: IdentityRecord['state'],
  created_at: number,
  updated_at: number,
];

/** The domain records of one session check, from its row read as an array. */
export function fromSessionCheckTuple(
  row: SessionCheckTuple,
  tokenHash: string,
): SessionWithIdentity {
  const [
    id,
    identityId,
    via,
    issuedAt,
    expiresAt,
    revokedAt,
    lastUsedAt,
    aal,
    username,
    displayName,
    avatarUrl,
    email,
    emailVerifiedAt,
    state,
    createdAt,
    updatedAt,
  ] = row;
  return {
    session: {
      id,
      token_hash: tokenHash,
      identity_id: identityId,
      authenticated_via: via,
      issued_at: issuedAt,
      expires_at: expiresAt,
      revoked_at: revokedAt,
      last_used_at: lastUsedAt,
      aal,
    },
    identity: {
      id: identityId,
      username,
      display_name: displayName,
      avatar_url: avatarUrl,
      email,
      email_verified_at: emailVerifiedAt,
      state,
      password_hash: null,
      created_at: createdAt,
      updated_at: updatedAt,
    },
  };
}

/** Every column of an identity row. */
export const IDENTITY_COLUMNS = columnsOf<IdentityRecord>({
  id: true,
  username: true,
  display_name: true,
  avatar_url: true,
  email: true,
  email_verified_at: true,
  state: true,
  password_hash: true,
  created_at: true,
  updated_at: true,
});

/**
 * What a session record and a session listing both read: the record adds the token hash,
 * the listing the device, as their types do (SessionListing).
 */
const SESSION_COMMON_COLUMNS = [
  'id',
  'identity_id',
  'authenticated_via',
  'issued_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'aal',
] as const;

/** A session record's columns, without the device ones (the lists read those). */
const SESSION_RECORD_COLUMNS = [
  ...SESSION_COMMON_COLUMNS,
  'token_hash',
] as const satisfies readonly (keyof SessionRecord)[];

/** What a session list shows: never the token hash. */
const SESSION_LISTING_COLUMNS = [
  ...SESSION_COMMON_COLUMNS,
  'user_agent',
  'client_address',
] as const satisfies readonly (keyof SessionListing)[];

const SERVICE_TOKEN_COLUMNS = columnsOf<ServiceTokenRecord>({
  id: true,
  name: true,
  token_hash: true,
  grants: true,
  created_at: true,
  revoked_at: true,
  token_format: true,
});

/** A caller's service token through Kysely: the fallback of the reads that pair it with a row. */
export function findServiceTokenRow(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom('service_tokens')
    .select(SERVICE_TOKEN_COLUMNS)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * The reads on every session check (the session by token hash, the bearer's service token,
 * an identity by id, username or address) as plain SQL, for the adapters to run as
 * prepared statements instead of building and compiling them through Kysely on each
 * request. Same rows as the Kysely
 * queries of this folder; the column lists fail to compile when a record gains a field.
 * `param` is the dialect's placeholder for the single parameter (`$1`, or SQLite's `+?`:
 * sqlite/prepared-reads.ts says why).
 */
export function hotPathSql(param: string) {
  return {
    /** Session and identity in one statement: one snapshot, one round trip (PostgreSQL). */
    sessionCheckByTokenHash: `SELECT ${SESSION_CHECK_COLUMNS.join(', ')} FROM sessions s INNER JOIN identities i ON i.id = s.identity_id WHERE s.token_hash = ${param}`,
    serviceTokenByHash: `SELECT ${SERVICE_TOKEN_COLUMNS.join(', ')} FROM service_tokens WHERE token_hash = ${param}`,
    identityById: `SELECT ${IDENTITY_COLUMNS.join(', ')} FROM identities WHERE id = ${param}`,
    identityByUsername: `SELECT ${IDENTITY_COLUMNS.join(', ')} FROM identities WHERE username = ${param}`,
    identityByEmail: `SELECT ${IDENTITY_COLUMNS.join(', ')} FROM identities WHERE email = ${param}`,
  };
}

export function sessionQueries(db: Kysely<Database>): SessionStore {
  const postgres = onPostgres(db);
  async function findSessionByTokenHash(tokenHash: string) {
    const row = await db
      .selectFrom('sessions as s')
      .innerJoin('identities as i', 'i.id', 's.identity_id')
      .select(SESSION_CHECK_COLUMNS)
      .where('s.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (!row) return undefined;
    // Kysely names each selected column after its part behind the table alias (no aliases).
    const tuple = SESSION_CHECK_COLUMNS.map(
      (column) => row[column.slice(column.indexOf('.') + 1) as keyof typeof row],
    );
    return fromSessionCheckTuple(tuple as SessionCheckTuple, tokenHash);
  }
  return {
    async insertSession(record) {
      await db.insertInto('sessions').values(record).execute();
    },
    findSessionByTokenHash,
    async findCallerAndSession(serviceTokenHash, sessionTokenHash) {
      const serviceToken = await findServiceTokenRow(db, serviceTokenHash);
      return { serviceToken, found: await findSessionByTokenHash(sessionTokenHash) };
    },
    findSessionById(id) {
      return db
        .selectFrom('sessions')
        .select(SESSION_RECORD_COLUMNS)
        .where('id', '=', id)
        .executeTakeFirst();
    },
    async revokeSessionById(id, at) {
      const found = await db
        .selectFrom('sessions')
        .select('revoked_at')
        .where('id', '=', id)
        .executeTakeFirst();
      if (!found) return false;
      if (found.revoked_at === null) {
        await db
          .updateTable('sessions')
          .set({ revoked_at: at })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .execute();
      }
      return true;
    },
    async revokeSessionByTokenHash(tokenHash, at) {
      await db
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('token_hash', '=', tokenHash)
        .where('revoked_at', 'is', null)
        .execute();
    },
    async revokeIdentitySessions(identityId, at, keep) {
      let update = db
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('identity_id', '=', identityId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', at);
      if (keep !== undefined) update = update.where('id', '<>', keep);
      const result = await update.executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async touchSessions(uses, granularityMs) {
      if (uses.length === 0) return;
      // The batch joined as one relation (the latest use of each id), so a batch is one
      // statement: one round trip on PostgreSQL instead of one per session, one statement
      // to prepare on SQLite instead of one per session. On PostgreSQL the rows are locked
      // in the order of the plan, by id here (or the table's own order), the same for every
      // instance: two flushing overlapping batches at once wait for each other instead of
      // deadlocking, as a row-by-row transaction did (test/account/last-use.test.ts).
      const latest = postgres
        ? sql`SELECT id, max(at) AS at
            FROM unnest(${uses.map((use) => use.id)}::text[], ${uses.map((use) => use.at)}::bigint[]) AS batch (id, at)
            GROUP BY id ORDER BY id`
        : sql`SELECT value ->> 0 AS id, max(value ->> 1) AS at
            FROM json_each(${JSON.stringify(uses.map((use) => [use.id, use.at]))}) GROUP BY 1`;
      const stale = sql`sessions.last_used_at IS NULL OR sessions.last_used_at <= latest.at - ${granularityMs}`;
      await sql`UPDATE sessions SET last_used_at = latest.at FROM (${latest}) AS latest
        WHERE sessions.id = latest.id AND (${stale})`.execute(db);
    },
    listLiveSessions(identityId, now) {
      return db
        .selectFrom('sessions')
        .select(SESSION_LISTING_COLUMNS)
        .where('identity_id', '=', identityId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .orderBy('issued_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
    },
    async deleteExpiredSessions(now) {
      const result = await db
        .deleteFrom('sessions')
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
