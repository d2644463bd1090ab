import type BetterSqlite3 from 'better-sqlite3';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { SessionWithIdentity } from '../../domain/sessions/session-store.js';
import type { Store } from '../../domain/store.js';
import {
  type ProfilePartOfRow,
  type SessionPartOfRow,
  hotPathSql,
  toSessionWithIdentity,
} from '../queries/sessions.js';
import { translateSqliteError } from './errors.js';

export type PreparedReads = Pick<
  Store,
  'findSessionByTokenHash' | 'findServiceTokenByHash' | 'findIdentityById'
>;

interface Statements {
  session: BetterSqlite3.Statement<[string], SessionPartOfRow>;
  profile: BetterSqlite3.Statement<[string], ProfilePartOfRow>;
  serviceToken: BetterSqlite3.Statement<[string], ServiceTokenRecord>;
  identity: BetterSqlite3.Statement<[string], IdentityRecord>;
}

/**
 * The session-check reads as statements prepared once on the connection, instead of a
 * Kysely build + compile + `prepare` per request. Each call still reads the database:
 * nothing is cached, so a revocation or a disable is seen by the very next request.
 *
 * Kysely shares this one connection behind its own mutex. When one of its transactions is
 * open (`inTransaction`), a read here would see that transaction's uncommitted rows, so the
 * call goes through Kysely (`fallback`) and waits its turn like any other query. Otherwise
 * the synchronous statement runs between two of Kysely's queries and reads committed data.
 */
export function sqlitePreparedReads(raw: BetterSqlite3.Database, fallback: Store): PreparedReads {
  const sql = hotPathSql('?');
  // Prepared on first use: the tables exist only once the store has been migrated.
  let prepared: Statements | undefined;
  const statements = (): Statements =>
    (prepared ??= {
      session: raw.prepare(sql.sessionOnlyByTokenHash),
      profile: raw.prepare(sql.profileById),
      serviceToken: raw.prepare(sql.serviceTokenByHash),
      identity: raw.prepare(sql.identityById),
    });

  /**
   * Two key lookups in one read transaction: one snapshot, like the join, at about half
   * the join's cost on SQLite.
   */
  const sessionCheck = raw.transaction((tokenHash: string): SessionWithIdentity | undefined => {
    const { session, profile } = statements();
    const row = session.get(tokenHash);
    const identity = row && profile.get(row.identity_id);
    return identity && toSessionWithIdentity(row, identity, tokenHash);
  });

  return {
    async findSessionByTokenHash(tokenHash) {
      if (raw.inTransaction) return fallback.findSessionByTokenHash(tokenHash);
      try {
        return sessionCheck(tokenHash);
      } catch (error) {
        throw translateSqliteError(error);
      }
    },
    async findServiceTokenByHash(tokenHash) {
      if (raw.inTransaction) return fallback.findServiceTokenByHash(tokenHash);
      try {
        return statements().serviceToken.get(tokenHash);
      } catch (error) {
        throw translateSqliteError(error);
      }
    },
    async findIdentityById(id) {
      if (raw.inTransaction) return fallback.findIdentityById(id);
      try {
        return statements().identity.get(id);
      } catch (error) {
        throw translateSqliteError(error);
      }
    },
  };
}
