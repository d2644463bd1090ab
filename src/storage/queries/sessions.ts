import type { Kysely } from 'kysely';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { SessionRecord } from '../../domain/sessions/session.js';
import type { SessionStore, SessionWithIdentity } from '../../domain/sessions/session-store.js';
import type { Database } from '../schema.js';

/** One row of the session check: the session joined with its identity (no password hash). */
export interface SessionIdentityRow {
  s_id: string;
  identity_id: string;
  authenticated_via: SessionRecord['authenticated_via'];
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
  username: string;
  display_name: string;
  avatar_url: string | null;
  state: IdentityRecord['state'];
  created_at: number;
  updated_at: number;
}

export type SessionPartOfRow = Pick<
  SessionIdentityRow,
  's_id' | 'identity_id' | 'authenticated_via' | 'issued_at' | 'expires_at' | 'revoked_at'
>;
export type ProfilePartOfRow = Omit<SessionIdentityRow, keyof SessionPartOfRow>;

/**
 * The domain records of one session check, from the joined row (pass it twice) or from the
 * two rows of separate lookups. Built field by field: spreading driver rows into one object
 * cost more than both SQLite lookups together.
 */
export function toSessionWithIdentity(
  row: SessionPartOfRow,
  profile: ProfilePartOfRow,
  tokenHash: string,
): SessionWithIdentity {
  const session: SessionRecord = {
    id: row.s_id,
    token_hash: tokenHash,
    identity_id: row.identity_id,
    authenticated_via: row.authenticated_via,
    issued_at: row.issued_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  };
  const identity: IdentityRecord = {
    id: row.identity_id,
    username: profile.username,
    display_name: profile.display_name,
    avatar_url: profile.avatar_url,
    state: profile.state,
    password_hash: null,
    created_at: profile.created_at,
    updated_at: profile.updated_at,
  };
  return { session, identity };
}

const IDENTITY_COLUMNS = {
  id: true,
  username: true,
  display_name: true,
  avatar_url: true,
  state: true,
  password_hash: true,
  created_at: true,
  updated_at: true,
} satisfies Record<keyof IdentityRecord, true>;

const SERVICE_TOKEN_COLUMNS = {
  id: true,
  name: true,
  token_hash: true,
  grants: true,
  created_at: true,
  revoked_at: true,
} satisfies Record<keyof ServiceTokenRecord, true>;

const list = (columns: object) => Object.keys(columns).join(', ');

/** The session columns of the session check, aliased as in `SessionIdentityRow`. */
const SESSION_CHECK_COLUMNS =
  's.id AS s_id, s.identity_id, s.authenticated_via, s.issued_at, s.expires_at, s.revoked_at';
/** The identity columns of the session check: everything public, never the password hash. */
const PROFILE_COLUMNS = 'username, display_name, avatar_url, state, created_at, updated_at';

/**
 * The reads on every session check (the session by token hash, the bearer's service token,
 * an identity by id) as plain SQL, for the adapters to run as prepared statements instead
 * of building and compiling them through Kysely on each request. Same rows as the Kysely
 * queries of this folder; the column lists fail to compile when a record gains a field.
 * `param` is the dialect's placeholder for the single parameter (`?` or `$1`).
 */
export function hotPathSql(param: string) {
  return {
    /** Session and identity in one statement: one round trip (PostgreSQL). */
    sessionByTokenHash: `SELECT ${SESSION_CHECK_COLUMNS}, i.${PROFILE_COLUMNS.replaceAll(', ', ', i.')} FROM sessions s INNER JOIN identities i ON i.id = s.identity_id WHERE s.token_hash = ${param}`,
    /** The same rows in two unique-key lookups, for SQLite, where they cost less than the join. */
    sessionOnlyByTokenHash: `SELECT ${SESSION_CHECK_COLUMNS} FROM sessions s WHERE s.token_hash = ${param}`,
    profileById: `SELECT ${PROFILE_COLUMNS} FROM identities WHERE id = ${param}`,
    serviceTokenByHash: `SELECT ${list(SERVICE_TOKEN_COLUMNS)} FROM service_tokens WHERE token_hash = ${param}`,
    identityById: `SELECT ${list(IDENTITY_COLUMNS)} FROM identities WHERE id = ${param}`,
  };
}

export function sessionQueries(db: Kysely<Database>): SessionStore {
  return {
    async insertSession(record) {
      await db.insertInto('sessions').values(record).execute();
    },
    async findSessionByTokenHash(tokenHash) {
      const row = await db
        .selectFrom('sessions as s')
        .innerJoin('identities as i', 'i.id', 's.identity_id')
        .select([
          's.id as s_id',
          's.identity_id',
          's.authenticated_via',
          's.issued_at',
          's.expires_at',
          's.revoked_at',
          'i.username',
          'i.display_name',
          'i.avatar_url',
          'i.state',
          'i.created_at',
          'i.updated_at',
        ])
        .where('s.token_hash', '=', tokenHash)
        .executeTakeFirst();
      return row && toSessionWithIdentity(row, row, tokenHash);
    },
    findSessionById(id) {
      return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
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
    async revokeIdentitySessions(identityId, at) {
      const result = await db
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('identity_id', '=', identityId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
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
