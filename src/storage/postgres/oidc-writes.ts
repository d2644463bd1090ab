import type { OidcModelRecord } from '../../domain/oidc/model.js';
import type { OidcWrites } from '../store.js';
import {
  MODEL_COLUMNS,
  modelValues,
  oidcSql,
  postgresJsonField,
  UPSERT_CONFLICT,
} from '../queries/oidc.js';
import type { PostgresPool } from './pool.js';

const SQL = oidcSql((n) => `$${n}`, postgresJsonField);

/** The column types a VALUES list of bound parameters must name (PostgreSQL infers text). */
const CAST: Partial<Record<(typeof MODEL_COLUMNS)[number], string>> = {
  consumed_at: '::bigint',
  expires_at: '::bigint',
};

/** `records` rows of bound parameters, from `$first` on, each a record's MODEL_COLUMNS. */
function valueRows(records: number, first: number): string {
  return Array.from(
    { length: records },
    (_, r) =>
      `(${MODEL_COLUMNS.map((column, c) => `$${first + r * MODEL_COLUMNS.length + c}${CAST[column] ?? ''}`).join(', ')})`,
  ).join(', ');
}

/** Bound as each record's MODEL_COLUMNS, one after another. */
const upsertAll = (records: number) =>
  `INSERT INTO oidc_models (${MODEL_COLUMNS.join(', ')}) VALUES ${valueRows(records, 1)} ${UPSERT_CONFLICT}`;

/**
 * Bound as (at, kind, id) of the spent model, then each record's MODEL_COLUMNS: one
 * statement, so one commit. The UPDATE waits for a concurrent spender's commit and then
 * finds the row used; the records are written only when it changed the row, so the
 * statement returns rows for exactly one caller and none for the others.
 */
const spendAndUpsert = (records: number) =>
  `WITH spent AS (${SQL.consumeModel} RETURNING 1)
    INSERT INTO oidc_models (${MODEL_COLUMNS.join(', ')})
    SELECT * FROM (VALUES ${valueRows(records, 4)}) AS issued (${MODEL_COLUMNS.join(', ')})
    WHERE EXISTS (SELECT 1 FROM spent)
    ${UPSERT_CONFLICT} RETURNING kind`;

/**
 * The provider's writes on every token request (a code or refresh token spent, the tokens
 * issued) as named prepared statements, without a Kysely build and compile per call. Each
 * is one statement on an idle connection of the pool, committing on its own as through
 * Kysely. The spending stays one conditional UPDATE: of any number of callers, on any
 * instance, one changes the row.
 */
export function postgresOidcWrites(pool: PostgresPool): OidcWrites {
  const consume = async (kind: string, id: string, at: number) => {
    const result = await pool.query({
      name: 'tessera_oidc_model_consume',
      text: SQL.consumeModel,
      values: [at, kind, id],
    });
    return result.rowCount === 1;
  };
  /** The records in one statement; a code exchange and a refresh issue two: few names. */
  const upsert = async (records: readonly OidcModelRecord[]) => {
    await pool.query({
      name: `tessera_oidc_upsert_${records.length}`,
      text: upsertAll(records.length),
      values: records.flatMap(modelValues),
    });
  };
  return {
    upsertOidcModel: (record) => upsert([record]),
    consumeOidcModel: consume,
    async writeOidcModels(spend, upserts) {
      if (upserts.length === 0) return spend ? consume(spend.kind, spend.id, spend.at) : true;
      if (!spend) {
        await upsert(upserts);
        return true;
      }
      const result = await pool.query({
        name: `tessera_oidc_spend_upsert_${upserts.length}`,
        text: spendAndUpsert(upserts.length),
        values: [spend.at, spend.kind, spend.id, ...upserts.flatMap(modelValues)],
      });
      return (result.rowCount ?? 0) > 0;
    },
  };
}
