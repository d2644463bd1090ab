import { type Kysely, sql } from 'kysely';
import type { RecoveryFlowStore } from '../../domain/recovery/recovery-flow-store.js';
import type { Database } from '../schema.js';

export function recoveryFlowQueries(db: Kysely<Database>): RecoveryFlowStore {
  return {
    async insertRecoveryFlow(record) {
      await db.insertInto('recovery_flows').values(record).execute();
    },
    findRecoveryFlow(id) {
      return db.selectFrom('recovery_flows').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async markRecoverySent(id, sent, now) {
      const result = await db
        .updateTable('recovery_flows')
        .set({ state: 'sent', ...sent })
        .where('id', '=', id)
        .where('state', 'in', ['created', 'sent'])
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async countRecoveryAttempt(id, maxAttempts) {
      const result = await db
        .updateTable('recovery_flows')
        .set({
          attempts: sql<number>`attempts + 1`,
          state: sql<
            'sent' | 'failed'
          >`CASE WHEN attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE 'sent' END`,
        })
        .where('id', '=', id)
        .where('state', '=', 'sent')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async completeRecoveryFlow(id, now) {
      const result = await db
        .updateTable('recovery_flows')
        .set({ state: 'completed' })
        .where('id', '=', id)
        .where('state', '=', 'sent')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteExpiredRecoveryFlows(before) {
      const result = await db
        .deleteFrom('recovery_flows')
        .where('expires_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
