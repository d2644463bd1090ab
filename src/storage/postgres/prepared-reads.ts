import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { OidcClientRecord } from '../../domain/oidc/client.js';
import type { OidcModelRecord } from '../../domain/oidc/model.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { PreparedReads } from '../store.js';
import { oidcSql, postgresJsonField, tokenRead } from '../queries/oidc.js';
import { type SessionCheckTuple, fromSessionCheckTuple, hotPathSql } from '../queries/sessions.js';
import { jsonReads, jsonRow } from './json-row.js';
import type { PostgresPool } from './pool.js';

/**
 * The reads of the hottest paths (the session check; the OpenID provider's lookups of its
 * codes, tokens, grants and clients) as named prepared statements: PostgreSQL parses and
 * plans each once per connection instead of on every request, and no Kysely query is
 * built or compiled. Every call still reads the database (nothing is cached, so a revocation or a
 * disable is seen by the next request). `pool.query` takes an idle connection, never one
 * holding a transaction, so these read committed data only; reads inside a transaction go
 * through the transaction's own store.
 *
 * Each read answers its row as one JSON value (json-row.ts says why).
 */
/**
 * The service token and the session check as one statement, each a scalar subquery
 * answering its row as JSON or NULL: verify's two reads in one round trip (one snapshot).
 * The identity lookup's two reads the same way, by id, username or address.
 */
const [CALLER_AND_SESSION, CALLER_AND_IDENTITY] = (() => {
  const sql = hotPathSql('$1');
  const second = hotPathSql('$2');
  const caller = jsonRow(sql.serviceTokenByHash, 'object');
  const identityBy = (text: string) => `SELECT (${caller}), (${jsonRow(text, 'object')})`;
  return [
    `SELECT (${caller}), (${jsonRow(second.sessionCheckByTokenHash, 'array')})`,
    {
      id: identityBy(second.identityById),
      username: identityBy(second.identityByUsername),
      email: identityBy(second.identityByEmail),
    },
  ] as const;
})();

export function postgresPreparedReads(pool: PostgresPool): PreparedReads {
  const sql = hotPathSql('$1');
  const oidc = oidcSql((n) => `$${n}`, postgresJsonField);

  const read = jsonReads(pool);

  const sessionCheck = read<SessionCheckTuple>(
    'tessera_session_check',
    sql.sessionCheckByTokenHash,
    'array',
  );
  const serviceToken = read<ServiceTokenRecord>(
    'tessera_service_token_by_hash',
    sql.serviceTokenByHash,
    'object',
  );
  const identity = read<IdentityRecord>('tessera_identity_by_id', sql.identityById, 'object');
  /** A service token and a second row, read by one two-column statement. */
  const callerAnd =
    <Row>(name: string, text: string) =>
    async (values: [string, string]) =>
      (
        await pool.query<[ServiceTokenRecord | null, Row | null]>({
          name,
          text,
          values,
          rowMode: 'array',
        })
      ).rows[0]!;
  const callerAndSession = callerAnd<SessionCheckTuple>(
    'tessera_caller_and_session',
    CALLER_AND_SESSION,
  );
  const callerAndIdentity = {
    id: callerAnd<IdentityRecord>('tessera_caller_and_identity', CALLER_AND_IDENTITY.id),
    username: callerAnd<IdentityRecord>(
      'tessera_caller_and_identity_by_username',
      CALLER_AND_IDENTITY.username,
    ),
    email: callerAnd<IdentityRecord>(
      'tessera_caller_and_identity_by_email',
      CALLER_AND_IDENTITY.email,
    ),
  };
  const model = read<OidcModelRecord>('tessera_oidc_model_by_id', oidc.modelById, 'object');
  const modelByUid = read<OidcModelRecord>('tessera_oidc_model_by_uid', oidc.modelByUid, 'object');
  const client = read<OidcClientRecord>('tessera_oidc_client_by_id', oidc.clientById, 'object');
  const token = read<unknown[]>('tessera_oidc_token', oidc.tokenWithContext, 'array');

  return {
    async findSessionByTokenHash(tokenHash) {
      const row = await sessionCheck([tokenHash]);
      return row && fromSessionCheckTuple(row, tokenHash);
    },
    findServiceTokenByHash: (tokenHash) => serviceToken([tokenHash]),
    async findCallerAndSession(serviceTokenHash, sessionTokenHash) {
      const [token, session] = await callerAndSession([serviceTokenHash, sessionTokenHash]);
      return {
        serviceToken: token ?? undefined,
        found: session === null ? undefined : fromSessionCheckTuple(session, sessionTokenHash),
      };
    },
    findIdentityById: (id) => identity([id]),
    async findCallerAndIdentity(serviceTokenHash, by, value) {
      const [token, found] = await callerAndIdentity[by]([serviceTokenHash, value]);
      return { serviceToken: token ?? undefined, identity: found ?? undefined };
    },
    findOidcModel: (kind, id, now) => model([kind, id, now]),
    findOidcModelByUid: (kind, uid, now) => modelByUid([kind, uid, now]),
    findOidcClient: (id) => client([id]),
    async findOidcToken(kind, id, now) {
      const row = await token([now, now, kind, id, now]);
      return row && tokenRead(row);
    },
  };
}
