import type { Kysely } from 'kysely';
import type { ServiceTokenStore } from '../../domain/service-tokens/service-token-store.js';
import { isUuid } from '../../lib/ids.js';
import type { Database } from '../schema.js';

export function serviceTokenQueries(db: Kysely<Database>): ServiceTokenStore {
  return {
    async insertServiceToken(record) {
      await db.insertInto('service_tokens').values(record).execute();
    },
    findServiceTokenByHash(tokenHash) {
      return db
        .selectFrom('service_tokens')
        .selectAll()
        .where('token_hash', '=', tokenHash)
        .executeTakeFirst();
    },
    findServiceTokenByIdOrName(idOrName) {
      return db
        .selectFrom('service_tokens')
        .selectAll()
        .where(isUuid(idOrName) ? 'id' : 'name', '=', idOrName)
        .executeTakeFirst();
    },
    listServiceTokens() {
      return db.selectFrom('service_tokens').selectAll().orderBy('created_at').execute();
    },
    async revokeServiceToken(id, at) {
      await db
        .updateTable('service_tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .execute();
    },
  };
}
