import type { Kysely } from 'kysely';
import type { WebhookStore } from '../../domain/webhooks/webhook.js';
import type { Database } from '../schema.js';

export function webhookQueries(db: Kysely<Database>): WebhookStore {
  return {
    async insertWebhook(record) {
      await db.insertInto('webhooks').values(record).execute();
    },
    async deleteWebhook(id) {
      const result = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
    findWebhook(id) {
      return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
    },
    listWebhooks() {
      return db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute();
    },
    listWebhookDeliveries(limit, webhookId) {
      let query = db.selectFrom('outbox').selectAll().where('kind', '=', 'webhook');
      if (webhookId !== undefined) query = query.where('target', '=', webhookId);
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    },
    async requeueWebhookDelivery(id, now) {
      // A failed row, or a pending one nobody holds (brought forward): never a row a worker
      // is sending (it would be sent twice at once), nor a sent one (its body is emptied).
      const result = await db
        .updateTable('outbox')
        .set({ state: 'pending', next_attempt_at: now, claim_token: null, updated_at: now })
        .where('id', '=', id)
        .where('kind', '=', 'webhook')
        .where((eb) =>
          eb.or([
            eb('state', '=', 'failed'),
            eb.and([eb('state', '=', 'pending'), eb('claim_token', 'is', null)]),
          ]),
        )
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
