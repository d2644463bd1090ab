import { type Kysely, sql } from 'kysely';
import type { FlowState } from '../../domain/login-flows/flow.js';
import type { FlowStore } from '../../domain/login-flows/flow-store.js';
import type { Database } from '../schema.js';

export function flowQueries(db: Kysely<Database>): FlowStore {
  return {
    async insertFlow(record) {
      await db.insertInto('flows').values(record).execute();
    },
    findFlow(id) {
      return db.selectFrom('flows').selectAll().where('id', '=', id).executeTakeFirst();
    },
    listFlowErrors(flowId) {
      return db
        .selectFrom('flow_errors')
        .selectAll()
        .where('flow_id', '=', flowId)
        .orderBy('at')
        .execute();
    },
    async completeFlow(id, now, from = 'created') {
      const result = await db
        .updateTable('flows')
        .set({ state: 'completed' })
        .where('id', '=', id)
        .where('state', '=', from)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async awaitSecondFactor(id, now, identityId, firstMethod) {
      const result = await db
        .updateTable('flows')
        .set({
          state: 'second_factor_required',
          identity_id: identityId,
          first_method: firstMethod,
        })
        .where('id', '=', id)
        .where('state', '=', 'created')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async closeWaitingFlows(identityId) {
      const result = await db
        .updateTable('flows')
        .set({ state: 'failed' })
        .where('identity_id', '=', identityId)
        .where('state', '=', 'second_factor_required')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    // INSERT … SELECT rather than a plain INSERT: a flow swept away between the submission
    // loading it and its failure being recorded must not turn into a foreign-key error.
    async recordFlowError(record) {
      await db
        .insertInto('flow_errors')
        .columns(['flow_id', 'at', 'error'])
        .expression(
          db
            .selectFrom('flows')
            .select([
              'id as flow_id',
              sql<number>`CAST(${record.at} AS BIGINT)`.as('at'),
              sql<string>`CAST(${record.error} AS TEXT)`.as('error'),
            ])
            .where('id', '=', record.flow_id),
        )
        .execute();
    },
    async countFailedAttempt(id, maxAttempts) {
      const result = await db
        .updateTable('flows')
        .set({
          failed_attempts: sql<number>`failed_attempts + 1`,
          state: sql<FlowState>`CASE WHEN failed_attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE state END`,
        })
        .where('id', '=', id)
        .where('state', 'in', ['created', 'second_factor_required'])
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteExpiredFlows(now) {
      const result = await db.deleteFrom('flows').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
