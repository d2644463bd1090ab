import type { Kysely } from 'kysely';
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
    async deleteExpiredProviderAuthorizations(now) {
      const result = await db
        .deleteFrom('provider_authorizations')
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
