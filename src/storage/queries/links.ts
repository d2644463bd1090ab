import type { Kysely } from 'kysely';
import type { LinkStore } from '../../domain/links/link-store.js';
import type { Database } from '../schema.js';

export function linkQueries(db: Kysely<Database>): LinkStore {
  return {
    async insertLink(record) {
      await db.insertInto('links').values(record).execute();
    },
    async claimLink(record) {
      const result = await db
        .insertInto('links')
        .values(record)
        .onConflict((conflict) => conflict.columns(['provider', 'subject']).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    findLink(provider, subject) {
      return db
        .selectFrom('links')
        .selectAll()
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .executeTakeFirst();
    },
    markLinkVerified(provider, subject, at) {
      return db
        .updateTable('links')
        .set((eb) => ({ verified_at: eb.fn.coalesce('verified_at', eb.val(at)) }))
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .returningAll()
        .executeTakeFirst();
    },
    listLinks(identityId) {
      return db
        .selectFrom('links')
        .selectAll()
        .where('identity_id', '=', identityId)
        .orderBy('linked_at')
        .orderBy('provider')
        .orderBy('subject')
        .execute();
    },
    async deleteLink(identityId, provider, subject) {
      const result = await db
        .deleteFrom('links')
        .where('identity_id', '=', identityId)
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
  };
}
