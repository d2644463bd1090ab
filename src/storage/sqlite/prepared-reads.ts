import type BetterSqlite3 from 'better-sqlite3';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { IdentityKey } from '../../domain/identities/identity-store.js';
import type { OidcClientRecord } from '../../domain/oidc/client.js';
import type { OidcModelRecord } from '../../domain/oidc/model.js';
import type { OidcTokenKind } from '../../domain/oidc/oidc-store.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { SessionWithIdentity } from '../../domain/sessions/session-store.js';
import type { Store } from '../../domain/store.js';
import type { PreparedReads } from '../store.js';
import { type SessionCheckTuple, fromSessionCheckTuple, hotPathSql } from '../queries/sessions.js';
import { oidcSql, sqliteJsonField, tokenRead } from '../queries/oidc.js';
import { rawReader } from './raw-read.js';

interface Statements {
  sessionCheck: BetterSqlite3.Statement<[string], SessionCheckTuple>;
  serviceToken: BetterSqlite3.Statement<[string], ServiceTokenRecord>;
  /** An identity by id, username or address. */
  identityBy: Record<IdentityKey, BetterSqlite3.Statement<[string], IdentityRecord>>;
  oidcModel: BetterSqlite3.Statement<[string, string, number], OidcModelRecord>;
  oidcModelByUid: BetterSqlite3.Statement<[string, string, number], OidcModelRecord>;
  oidcClient: BetterSqlite3.Statement<[string], OidcClientRecord>;
  oidcToken: BetterSqlite3.Statement<[number, number, string, string, number], unknown[]>;
}

/**
 * The texts of the reads below. `+?`, not `?`: a bare parameter compared with an indexed
 * column lets SQLite's planner look at the bound value once ANALYZE has gathered STAT4
 * samples (the bench's seed runs it; an operator may), and it then prepares the statement
 * again at every bind: the session check's join cost 21 µs instead of 6. With `+` the
 * parameter is an expression whose value the planner never sees; every read here is by a
 * key (the session's token hash, a primary key, an OIDC model's uid), whose plan no value
 * could change (test/storage/query-plans.test.ts).
 */
export function sqliteReadSql() {
  return { sql: hotPathSql('+?'), oidc: oidcSql(() => '+?', sqliteJsonField) };
}

/**
 * The reads of the hottest paths (the session check; the OpenID provider's lookups of its
 * codes, tokens, grants and clients) as statements prepared once on the connection,
 * instead of a Kysely build + compile + `prepare` per request. Each call still reads the database:
 * nothing is cached, so a revocation or a disable is seen by the very next request.
 *
 * Kysely shares this one connection behind its own mutex. When one of its transactions is
 * open (`inTransaction`), a read here would see that transaction's uncommitted rows, so the
 * call goes through Kysely (`fallback`) and waits its turn like any other query. Otherwise
 * the synchronous statement runs between two of Kysely's queries and reads committed data.
 * A read needs no lock in WAL mode, so another process's write lock does not stop it; the
 * rare SQLITE_BUSY a reader can meet (another process recovering the WAL after a crash)
 * is waited out on timers, never inside the call.
 */
export function sqlitePreparedReads(
  raw: BetterSqlite3.Database,
  fallback: Store,
  timeoutMs: number,
): PreparedReads {
  const { sql, oidc } = sqliteReadSql();
  // Prepared on first use: the tables exist only once the store has been migrated.
  let prepared: Statements | undefined;
  const statements = (): Statements =>
    (prepared ??= {
      sessionCheck: raw.prepare<[string], SessionCheckTuple>(sql.sessionCheckByTokenHash).raw(),
      serviceToken: raw.prepare(sql.serviceTokenByHash),
      identityBy: {
        id: raw.prepare(sql.identityById),
        username: raw.prepare(sql.identityByUsername),
        email: raw.prepare(sql.identityByEmail),
      },
      oidcModel: raw.prepare(oidc.modelById),
      oidcModelByUid: raw.prepare(oidc.modelByUid),
      oidcClient: raw.prepare(oidc.clientById),
      oidcToken: raw
        .prepare<[number, number, string, string, number], unknown[]>(oidc.tokenWithContext)
        .raw(),
    });

  /**
   * Session and identity in one statement, so one snapshot without a transaction. The row
   * is read as an array (the driver builds an object per row at a cost comparable to the
   * lookup).
   */
  const sessionCheck = (tokenHash: string): SessionWithIdentity | undefined => {
    const row = statements().sessionCheck.get(tokenHash);
    return row && fromSessionCheckTuple(row, tokenHash);
  };

  const read = rawReader(raw, timeoutMs);

  return {
    findSessionByTokenHash: read(sessionCheck, (hash) => fallback.findSessionByTokenHash(hash)),
    findServiceTokenByHash: read(
      (hash) => statements().serviceToken.get(hash),
      (hash) => fallback.findServiceTokenByHash(hash),
    ),
    // Two statements back to back, in no transaction: each reads committed data, as the
    // two reads one after the other would.
    findCallerAndSession: read(
      (serviceTokenHash: string, sessionTokenHash: string) => ({
        serviceToken: statements().serviceToken.get(serviceTokenHash),
        found: sessionCheck(sessionTokenHash),
      }),
      (serviceTokenHash, sessionTokenHash) =>
        fallback.findCallerAndSession(serviceTokenHash, sessionTokenHash),
    ),
    findIdentityById: read(
      (id) => statements().identityBy.id.get(id),
      (id) => fallback.findIdentityById(id),
    ),
    findCallerAndIdentity: read(
      (serviceTokenHash: string, by: IdentityKey, value: string) => ({
        serviceToken: statements().serviceToken.get(serviceTokenHash),
        identity: statements().identityBy[by].get(value),
      }),
      (serviceTokenHash, by, value) => fallback.findCallerAndIdentity(serviceTokenHash, by, value),
    ),
    findOidcModel: read(
      (kind: string, id: string, now: number) => statements().oidcModel.get(kind, id, now),
      (kind, id, now) => fallback.findOidcModel(kind, id, now),
    ),
    findOidcModelByUid: read(
      (kind: string, uid: string, now: number) => statements().oidcModelByUid.get(kind, uid, now),
      (kind, uid, now) => fallback.findOidcModelByUid(kind, uid, now),
    ),
    findOidcClient: read(
      (id: string) => statements().oidcClient.get(id),
      (id) => fallback.findOidcClient(id),
    ),
    findOidcToken: read(
      (kind: OidcTokenKind, id: string, now: number) => {
        const row = statements().oidcToken.get(now, now, kind, id, now);
        return row && tokenRead(row);
      },
      (kind, id, now) => fallback.findOidcToken(kind, id, now),
    ),
  };
}
