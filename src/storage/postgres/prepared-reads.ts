import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { OidcClientRecord } from '../../domain/oidc/client.js';
import type { OidcModelRecord } from '../../domain/oidc/model.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { PreparedReads } from '../store.js';
import { accessTokenRead, oidcSql, postgresJsonField } from '../queries/oidc.js';
import { type SessionCheckTuple, fromSessionCheckTuple, hotPathSql } from '../queries/sessions.js';
import type { PostgresPool } from './pool.js';

/**
 * The reads of the hottest paths (the session check; the OpenID provider's lookups of its
 * codes, tokens, grants and clients) as named prepared statements: PostgreSQL parses and
 * plans each once per connection instead of on every request, and no Kysely query is
 * built or compiled. Every call still reads the database (nothing is cached, so a revocation or a
 * disable is seen by the next request). `pool.query` takes an idle connection, never one
 * holding a transaction, so these read committed data only; reads inside a transaction go
 * through the transaction's own store.
 */
export function postgresPreparedReads(pool: PostgresPool): PreparedReads {
  const sql = hotPathSql('$1');
  const oidc = oidcSql((n) => `$${n}`, postgresJsonField);

  async function first<Row extends object>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<Row | undefined> {
    return (await pool.query<Row>({ name, text, values })).rows[0];
  }

  return {
    async findSessionByTokenHash(tokenHash) {
      const { rows } = await pool.query<SessionCheckTuple>({
        name: 'tessera_session_check',
        text: sql.sessionCheckByTokenHash,
        values: [tokenHash],
        rowMode: 'array',
      });
      return rows[0] && fromSessionCheckTuple(rows[0], tokenHash);
    },
    findServiceTokenByHash(tokenHash) {
      return first<ServiceTokenRecord>('tessera_service_token_by_hash', sql.serviceTokenByHash, [
        tokenHash,
      ]);
    },
    findIdentityById(id) {
      return first<IdentityRecord>('tessera_identity_by_id', sql.identityById, [id]);
    },
    findOidcModel(kind, id, now) {
      return first<OidcModelRecord>('tessera_oidc_model_by_id', oidc.modelById, [kind, id, now]);
    },
    findOidcModelByUid(kind, uid, now) {
      return first<OidcModelRecord>('tessera_oidc_model_by_uid', oidc.modelByUid, [kind, uid, now]);
    },
    findOidcClient(id) {
      return first<OidcClientRecord>('tessera_oidc_client_by_id', oidc.clientById, [id]);
    },
    async findOidcAccessToken(id, now) {
      const { rows } = await pool.query<unknown[]>({
        name: 'tessera_oidc_access_token',
        text: oidc.accessToken,
        values: [now, now, id, now],
        rowMode: 'array',
      });
      return rows[0] && accessTokenRead(rows[0]);
    },
  };
}
