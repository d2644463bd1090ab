import type { Kysely } from 'kysely';
import type { AuditStore } from '../../domain/audit/audit.js';
import type { Database } from '../schema.js';

export function auditQueries(db: Kysely<Database>): AuditStore {
  return {
    async insertAuditRecords(records) {
      if (records.length === 0) return;
      // Idempotent by id: a batch retried after an ambiguous failure is not written twice.
      await db
        .insertInto('audit_log')
        .values(records)
        .onConflict((conflict) => conflict.column('id').doNothing())
        .execute();
    },
    listAuditRecords(limit) {
      return db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(limit).execute();
    },
  };
}
