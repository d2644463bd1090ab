import { type Kysely, sql } from 'kysely';
import { OUTBOX_STATES, type OutboxState, type OutboxStore } from '../../domain/outbox/outbox.js';
import type { Database } from '../schema.js';
import { onPostgres } from './dialect.js';

export function outboxQueries(db: Kysely<Database>): OutboxStore {
  // SKIP LOCKED is PostgreSQL's; SQLite's single writer makes its plain UPDATE atomic.
  const postgres = onPostgres(db);
  return {
    async insertOutboxRecord(record) {
      await db.insertInto('outbox').values(record).execute();
    },
    async claimOutboxRecords({ now, leaseMs, limit, kinds, token }) {
      if (kinds.length === 0) return [];
      // Every instance looks every second: an idle look is a read (outbox_due_idx), not
      // a write transaction, which on SQLite would take the write lock and sync each time.
      const due = await db
        .selectFrom('outbox')
        .select('id')
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where('kind', 'in', kinds)
        .limit(1)
        .executeTakeFirst();
      if (!due) return [];
      return db
        .updateTable('outbox')
        .set({
          next_attempt_at: now + leaseMs,
          claim_token: token,
          attempts: sql<number>`attempts + 1`,
          updated_at: now,
        })
        .where('id', 'in', (eb) => {
          const due = eb
            .selectFrom('outbox')
            .select('id')
            .where('state', '=', 'pending')
            .where('next_attempt_at', '<=', now)
            .where('kind', 'in', kinds)
            .orderBy('next_attempt_at')
            .limit(limit);
          return postgres ? due.forUpdate().skipLocked() : due;
        })
        .returningAll()
        .execute();
    },
    async settleOutboxRecord(id, token, settlement, now) {
      const common = { claim_token: null, updated_at: now };
      const values =
        settlement.state === 'sent'
          ? { ...common, state: 'sent' as const, payload: '{}', last_error: null }
          : settlement.state === 'pending'
            ? { ...common, next_attempt_at: settlement.retryAt, last_error: settlement.error }
            : { ...common, state: 'failed' as const, last_error: settlement.error };
      const result = await db
        .updateTable('outbox')
        .set(values)
        .where('id', '=', id)
        .where('claim_token', '=', token)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
    listOutboxRecords(limit, filter = {}) {
      let query = db.selectFrom('outbox').selectAll();
      if (filter.state !== undefined) query = query.where('state', '=', filter.state);
      if (filter.kind !== undefined) query = query.where('kind', '=', filter.kind);
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    },
    findOutboxRecord(id) {
      return db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async requeueOutboxRecords(now, id) {
      let query = db
        .updateTable('outbox')
        .set({ state: 'pending', next_attempt_at: now, claim_token: null, updated_at: now })
        .where('state', '=', 'failed');
      if (id !== undefined) query = query.where('id', '=', id);
      const rows = await query.returning('id').execute();
      return rows.map((row) => row.id);
    },
    async countOutboxRecords() {
      const rows = await db
        .selectFrom('outbox')
        .select(['state', db.fn.countAll<number | string>().as('count')])
        .groupBy('state')
        .execute();
      const counts = Object.fromEntries(OUTBOX_STATES.map((state) => [state, 0])) as Record<
        OutboxState,
        number
      >;
      for (const row of rows) counts[row.state] = Number(row.count);
      return counts;
    },
    async deleteSentOutboxRecords(before) {
      const result = await db
        .deleteFrom('outbox')
        .where('state', '=', 'sent')
        .where('updated_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
