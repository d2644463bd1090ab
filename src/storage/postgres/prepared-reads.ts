import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { Store } from '../../domain/store.js';
import { type SessionCheckTuple, fromSessionCheckTuple, hotPathSql } from '../queries/sessions.js';
import type { PostgresPool } from './pool.js';

export type PreparedReads = Pick<
  Store,
  'findSessionByTokenHash' | 'findServiceTokenByHash' | 'findIdentityById'
>;

/**
 * The session-check reads as named prepared statements: PostgreSQL parses and plans each
 * once per connection instead of on every request, and no Kysely query is built or
 * compiled. Every call still reads the database (nothing is cached, so a revocation or a
 * disable is seen by the next request). `pool.query` takes an idle connection, never one
 * holding a transaction, so these read committed data only; reads inside a transaction go
 * through the transaction's own store.
 */
export function postgresPreparedReads(pool: PostgresPool): PreparedReads {
  const sql = hotPathSql('$1');

  async function first<Row extends object>(
    name: string,
    text: string,
    key: string,
  ): Promise<Row | undefined> {
    return (await pool.query<Row>({ name, text, values: [key] })).rows[0];
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
      return first<ServiceTokenRecord>(
        'tessera_service_token_by_hash',
        sql.serviceTokenByHash,
        tokenHash,
      );
    },
    findIdentityById(id) {
      return first<IdentityRecord>('tessera_identity_by_id', sql.identityById, id);
    },
  };
}
