import type BetterSqlite3 from 'better-sqlite3';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { Store } from '../../domain/store.js';
import { type SessionIdentityRow, hotPathSql, toSessionWithIdentity } from '../queries/sessions.js';
import { translateSqliteError } from './errors.js';

type SessionOnlyRow = Pick<
  SessionIdentityRow,
  's_id' | 'identity_id' | 'authenticated_via' | 'issued_at' | 'expires_at' | 'revoked_at'
>;
type ProfileRow = Omit<SessionIdentityRow, keyof SessionOnlyRow>;

export type PreparedReads = Pick<
  Store,
  'findSessionByTokenHash' | 'findServiceTokenByHash' | 'findIdentityById'
>;

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
  let statements:
    | {
        session: BetterSqlite3.Statement<[string], SessionOnlyRow>;
        profile: BetterSqlite3.Statement<[string], ProfileRow>;
        serviceToken: BetterSqlite3.Statement<[string], ServiceTokenRecord>;
        identity: BetterSqlite3.Statement<[string], IdentityRecord>;
      }
    | undefined;

  function translated<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw translateSqliteError(error);
    }
  }

  function get<Row>(
    pick: (prepared: NonNullable<typeof statements>) => BetterSqlite3.Statement<[string], Row>,
    key: string,
  ): Row | undefined {
    return translated(() => {
      statements ??= {
        session: raw.prepare(sql.sessionOnlyByTokenHash),
        profile: raw.prepare(sql.profileById),
        serviceToken: raw.prepare(sql.serviceTokenByHash),
        identity: raw.prepare(sql.identityById),
      };
      return pick(statements).get(key);
    });
  }

  /**
   * Two key lookups in one read transaction: one snapshot, like the join, but cheaper on
   * SQLite (about 8.5 µs against 18 µs for the join and 10 µs for two autocommit reads,
   * which each take and release the WAL read locks).
   */
  const sessionCheck = raw.transaction((tokenHash: string): SessionIdentityRow | undefined => {
    const session = get((prepared) => prepared.session, tokenHash);
    if (!session) return undefined;
    const profile = get((prepared) => prepared.profile, session.identity_id);
    return profile && { ...session, ...profile };
  });

  return {
    async findSessionByTokenHash(tokenHash) {
      if (raw.inTransaction) return fallback.findSessionByTokenHash(tokenHash);
      const row = translated(() => sessionCheck(tokenHash));
      return row && toSessionWithIdentity(row, tokenHash);
    },
    async findServiceTokenByHash(tokenHash) {
      if (raw.inTransaction) return fallback.findServiceTokenByHash(tokenHash);
      return get((prepared) => prepared.serviceToken, tokenHash);
    },
    async findIdentityById(id) {
      if (raw.inTransaction) return fallback.findIdentityById(id);
      return get((prepared) => prepared.identity, id);
    },
  };
}
