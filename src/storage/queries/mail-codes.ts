import { type Kysely, sql } from 'kysely';
import type { MailCodeStore } from '../../domain/mail-codes/mail-code-store.js';
import type { Database } from '../schema.js';

export function mailCodeQueries(db: Kysely<Database>): MailCodeStore {
  return {
    async insertMailCode(record) {
      await db.insertInto('mail_codes').values(record).execute();
    },
    findMailCode(id) {
      return db.selectFrom('mail_codes').selectAll().where('id', '=', id).executeTakeFirst();
    },
    listPendingMailCodes(identityId, purpose) {
      return db
        .selectFrom('mail_codes')
        .selectAll()
        .where('identity_id', '=', identityId)
        .where('purpose', '=', purpose)
        .where('state', '=', 'pending')
        .orderBy('created_at', 'desc')
        .execute();
    },
    async supersedeMailCodes(identityId, purpose) {
      const result = await db
        .updateTable('mail_codes')
        .set({ state: 'superseded' })
        .where('identity_id', '=', identityId)
        .where('purpose', '=', purpose)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async countMailCodeAttempt(id, maxAttempts) {
      const result = await db
        .updateTable('mail_codes')
        .set({
          attempts: sql<number>`attempts + 1`,
          state: sql<
            'pending' | 'failed'
          >`CASE WHEN attempts + 1 >= ${maxAttempts} THEN 'failed' ELSE 'pending' END`,
        })
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async useMailCode(id, now) {
      const result = await db
        .updateTable('mail_codes')
        .set({ state: 'used', used_at: now })
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteExpiredMailCodes(before) {
      const result = await db
        .deleteFrom('mail_codes')
        .where('expires_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async renewMailCode(id, secrets) {
      const result = await db
        .updateTable('mail_codes')
        .set(secrets)
        .where('id', '=', id)
        .where('state', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
