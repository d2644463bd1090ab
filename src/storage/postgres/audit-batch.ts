import type { AuditRecord } from '../../domain/audit/audit.js';
import type { Store } from '../../domain/store.js';
import type { PostgresPool } from './pool.js';
import { UNSYNCED_COMMIT } from './unsynced-commit.js';

const COLUMN_TYPES = {
  id: 'text',
  at: 'bigint',
  action: 'text',
  service_name: 'text',
  service_id: 'text',
  target_identity: 'text',
  outcome: 'text',
  details: 'text',
} satisfies Record<keyof AuditRecord, string>;
const COLUMNS = Object.keys(COLUMN_TYPES) as (keyof AuditRecord)[];

/**
 * Any number of rows, each column one array parameter. The columns are named, not `*`, so
 * the Kysely dialect names this text too when a transaction runs it (statement-names.ts).
 */
const insert = (where = '') =>
  `INSERT INTO audit_log (${COLUMNS.join(', ')}) SELECT ${COLUMNS.join(', ')} FROM unnest(${COLUMNS.map(
    (column, k) => `$${k + 1}::${COLUMN_TYPES[column]}[]`,
  ).join(', ')}) AS rows (${COLUMNS.join(', ')})${where} ON CONFLICT (id) DO NOTHING`;
export const AUDIT_INSERT = insert();
/**
 * One row, as plain VALUES: what a mutation's transaction writes (a sign-in, a revocation).
 * Unnesting eight one-element arrays cost PostgreSQL about 190 µs more CPU per row on a
 * 2-core machine (483-543 against 277-357 µs per BEGIN, insert, COMMIT; 3,000 each).
 */
export const AUDIT_INSERT_ONE = `INSERT INTO audit_log (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(
  (_, k) => `$${k + 1}`,
).join(', ')}) ON CONFLICT (id) DO NOTHING`;
/** AUDIT_INSERT_ONE's parameters. */
export const auditColumns = (record: AuditRecord) => COLUMNS.map((column) => record[column]);
/** The buffered flush's: committed without waiting for the WAL flush (unsynced-commit.ts). */
const AUDIT_BATCH_INSERT = insert(` WHERE ${UNSYNCED_COMMIT}`);

/** AUDIT_INSERT's parameters: one array per column. */
export const auditColumnArrays = (records: readonly AuditRecord[]) =>
  COLUMNS.map((column) => records.map((record) => record[column]));

/**
 * The buffered audit flush as one named prepared statement whatever the batch size: each
 * column travels as one array parameter, so PostgreSQL plans it once per connection and no
 * Kysely insert of a whole batch is built and compiled per flush. No one is answered on
 * these rows, so their commit does not wait for the WAL flush, as on SQLite (the rows a
 * mutation writes commit with it, synced). Idempotent by id, like
 * the Kysely insert (a retried batch is not written twice). Rows written inside a
 * mutation's transaction run the same text on its connection (transaction-writes.ts).
 */
export function postgresAuditBatch(pool: PostgresPool): Pick<Store, 'insertAuditRecords'> {
  return {
    async insertAuditRecords(records) {
      if (records.length === 0) return;
      await pool.query({
        name: 'tessera_audit_batch',
        text: AUDIT_BATCH_INSERT,
        values: auditColumnArrays(records),
      });
    },
  };
}
