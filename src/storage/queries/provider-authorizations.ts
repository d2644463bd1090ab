import { type Kysely, sql } from 'kysely';
import type { ProviderAuthorizationStore } from '../../domain/providers/authorization.js';
import type { Database } from '../schema.js';

export function providerAuthorizationQueries(db: Kysely<Database>): ProviderAuthorizationStore {
  return {
    async insertProviderAuthorization(record) {
      await db.insertInto('provider_authorizations').values(record).execute();
    },
    takeProviderAuthorization(stateHash, browserHash, now) {
      return db
        .deleteFrom('provider_authorizations')
        .where('state_hash', '=', stateHash)
        .where('browser_hash', '=', browserHash)
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
    },
    async holdIdentityRow(identityId) {
      const result = await db
        .updateTable('identities')
        .set({ updated_at: sql<number>`updated_at` })
        .where('id', '=', identityId)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteExpiredProviderAuthorizations(now) {
      const result = await db
        .deleteFrom('provider_authorizations')
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
