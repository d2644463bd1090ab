import type { Kysely } from 'kysely';
import type { IdentityStore } from '../../domain/identities/identity-store.js';
import type { Database } from '../schema.js';

export function identityQueries(db: Kysely<Database>): IdentityStore {
  return {
    async insertIdentity(record) {
      await db.insertInto('identities').values(record).execute();
    },
    findIdentityById(id) {
      return db.selectFrom('identities').selectAll().where('id', '=', id).executeTakeFirst();
    },
    findIdentityByUsername(username) {
      return db
        .selectFrom('identities')
        .selectAll()
        .where('username', '=', username)
        .executeTakeFirst();
    },
    updateIdentityProfile(id, patch, updatedAt) {
      return db
        .updateTable('identities')
        .set({ ...patch, updated_at: updatedAt })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },
    setIdentityState(id, state, updatedAt) {
      return db
        .updateTable('identities')
        .set({ state, updated_at: updatedAt })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },
  };
}
