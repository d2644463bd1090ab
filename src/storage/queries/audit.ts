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
    listAuditRecords(limit, filter = {}) {
      let query = db.selectFrom('audit_log').selectAll();
      if (filter.actions?.length) query = query.where('action', 'in', filter.actions);
      if (filter.target_identity !== undefined) {
        query = query.where('target_identity', '=', filter.target_identity);
      }
      if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
      if (filter.until !== undefined) query = query.where('at', '<', filter.until);
      return query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    },
  };
}
