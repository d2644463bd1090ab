import type { Kysely } from 'kysely';
import type { IdentityKey, IdentityStore } from '../../domain/identities/identity-store.js';
import type { Database } from '../schema.js';
import { onPostgres } from './dialect.js';
import { findServiceTokenRow } from './sessions.js';

const SUMMARY_COLUMNS = [
  'id',
  'username',
  'display_name',
  'avatar_url',
  'email',
  'email_verified_at',
  'state',
  'created_at',
  'updated_at',
] as const;

export function identityQueries(db: Kysely<Database>): IdentityStore {
  const postgres = onPostgres(db);
  const findIdentityBy = (by: IdentityKey, value: string) =>
    db.selectFrom('identities').selectAll().where(by, '=', value).executeTakeFirst();
  return {
    async insertIdentity(record) {
      await db.insertInto('identities').values(record).execute();
    },
    findIdentityById: (id) => findIdentityBy('id', id),
    async findCallerAndIdentity(serviceTokenHash, by, value) {
      const serviceToken = await findServiceTokenRow(db, serviceTokenHash);
      return { serviceToken, identity: await findIdentityBy(by, value) };
    },
    findIdentityByUsername: (username) => findIdentityBy('username', username),
    findIdentityByEmail: (email) => findIdentityBy('email', email),
    setIdentityEmail(id, email, verifiedAt, updatedAt) {
      return db
        .updateTable('identities')
        .set({ email, email_verified_at: verifiedAt, updated_at: updatedAt })
        .where('id', '=', id)
        .returningAll()
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
    setIdentityPassword(id, passwordHash, updatedAt) {
      return db
        .updateTable('identities')
        .set({ password_hash: passwordHash, updated_at: updatedAt })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },
    async replacePasswordHash(id, expected, next) {
      const result = await db
        .updateTable('identities')
        .set({ password_hash: next })
        .where('id', '=', id)
        .where('password_hash', '=', expected)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async holdPasswordHash(id, expected) {
      const query = db
        .selectFrom('identities')
        .select('id')
        .where('id', '=', id)
        .where('password_hash', '=', expected);
      return (await (postgres ? query.forShare() : query).executeTakeFirst()) !== undefined;
    },
    listIdentities({ state, limit }) {
      let query = db.selectFrom('identities').select(SUMMARY_COLUMNS);
      if (state !== undefined) query = query.where('state', '=', state);
      return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    },
  };
}
