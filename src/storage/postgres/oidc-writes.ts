import type { OidcWrites } from '../store.js';
import { modelValues, oidcSql, postgresJsonField } from '../queries/oidc.js';
import type { PostgresPool } from './pool.js';

const SQL = oidcSql((n) => `$${n}`, postgresJsonField);

/**
 * The provider's writes on every token request (a code or refresh token spent, the tokens
 * issued) as named prepared statements, without a Kysely build and compile per call. Each
 * is one statement on an idle connection of the pool, committing on its own as through
 * Kysely. The spending stays one conditional UPDATE: of any number of callers, on any
 * instance, one changes the row.
 */
export function postgresOidcWrites(pool: PostgresPool): OidcWrites {
  return {
    async upsertOidcModel(record) {
      await pool.query({
        name: 'tessera_oidc_model_upsert',
        text: SQL.upsertModel,
        values: modelValues(record),
      });
    },
    async consumeOidcModel(kind, id, at) {
      const result = await pool.query({
        name: 'tessera_oidc_model_consume',
        text: SQL.consumeModel,
        values: [at, kind, id],
      });
      return result.rowCount === 1;
    },
  };
}
