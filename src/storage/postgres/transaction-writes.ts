import { CompiledQuery, type Kysely } from 'kysely';
import type { Store } from '../../domain/store.js';
import { SESSION_COLUMNS, signInSql } from '../queries/sign-in-sql.js';
import type { Database } from '../schema.js';
import { AUDIT_INSERT, AUDIT_INSERT_ONE, auditColumnArrays, auditColumns } from './audit-batch.js';

const SQL = signInSql((n) => `$${n}`);
/** A share lock: a password change (an UPDATE of the row) waits for the sign-in's commit. */
const HOLD_PASSWORD_HASH = `${SQL.holdPasswordHash} FOR SHARE`;

/** What a sign-in's transaction writes, and the audit row of every audited mutation. */
export type PostgresTransactionWrites = Pick<
  Store,
  'completeFlow' | 'insertSession' | 'holdPasswordHash' | 'insertAuditRecords'
>;

/**
 * The writes of a sign-in's transaction (the flow completed, the password hash held, the
 * session) and the audit row any mutation writes with its change, as SQL written once
 * and run on the transaction's own connection (`tx.executeQuery`): no Kysely query is
 * built or compiled per call, and the dialect still names each text (statement-names.ts),
 * so PostgreSQL plans it once per connection. A sign-in spent about as much CPU building
 * these three queries as PostgreSQL's round trips cost. Failures are the pool's storage
 * errors, as for any Kysely query; the store contract suite holds these to the same answers.
 */
export function postgresTransactionWrites(tx: Kysely<Database>): PostgresTransactionWrites {
  const run = (sql: string, values: readonly unknown[]) =>
    tx.executeQuery(CompiledQuery.raw(sql, [...values]));
  const changedOne = async (sql: string, values: readonly unknown[]) =>
    (await run(sql, values)).numAffectedRows === 1n;
  return {
    completeFlow: (id, now, from = 'created') => changedOne(SQL.completeFlow, [id, from, now]),
    holdPasswordHash: async (id, expected) =>
      (await run(HOLD_PASSWORD_HASH, [id, expected])).rows.length === 1,
    async insertSession(record) {
      await run(
        SQL.insertSession,
        SESSION_COLUMNS.map((column) => record[column] ?? null),
      );
    },
    async insertAuditRecords(records) {
      if (records.length === 0) return;
      if (records.length === 1) await run(AUDIT_INSERT_ONE, auditColumns(records[0]!));
      else await run(AUDIT_INSERT, auditColumnArrays(records));
    },
  };
}
