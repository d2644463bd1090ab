import type { Kysely } from 'kysely';
import type { LinkStore } from '../../domain/links/link-store.js';
import type { Database } from '../schema.js';

export function linkQueries(db: Kysely<Database>): LinkStore {
  return {
    async insertLink(record) {
      await db.insertInto('links').values(record).execute();
    },
    findLink(provider, subject) {
      return db
        .selectFrom('links')
        .selectAll()
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .executeTakeFirst();
    },
    async markLinkVerified(provider, subject, at) {
      await db
        .updateTable('links')
        .set({ verified_at: at })
        .where('provider', '=', provider)
        .where('subject', '=', subject)
        .where('verified_at', 'is', null)
        .execute();
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
