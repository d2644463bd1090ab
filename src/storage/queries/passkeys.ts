import type { Kysely } from 'kysely';
import type { PasskeyStore } from '../../domain/passkeys/passkey-store.js';
import type { Database } from '../schema.js';

export function passkeyQueries(db: Kysely<Database>): PasskeyStore {
  return {
    async insertPasskey(record) {
      await db.insertInto('passkeys').values(record).execute();
    },
    listPasskeys(identityId) {
      return db
        .selectFrom('passkeys')
        .selectAll()
        .where('identity_id', '=', identityId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
    },
    findPasskeyByCredentialId(credentialId) {
      return db
        .selectFrom('passkeys')
        .selectAll()
        .where('credential_id', '=', credentialId)
        .executeTakeFirst();
    },
    async recordPasskeyUse(id, use) {
      await db.updateTable('passkeys').set(use).where('id', '=', id).execute();
    },
    renamePasskey(identityId, id, name) {
      return db
        .updateTable('passkeys')
        .set({ name })
        .where('id', '=', id)
        .where('identity_id', '=', identityId)
        .returningAll()
        .executeTakeFirst();
    },
    async deletePasskey(identityId, id) {
      const result = await db
        .deleteFrom('passkeys')
        .where('id', '=', id)
        .where('identity_id', '=', identityId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
    async deletePasskeys(identityId) {
      const result = await db
        .deleteFrom('passkeys')
        .where('identity_id', '=', identityId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async putWebAuthnChallenge(record) {
      await db
        .insertInto('webauthn_challenges')
        .values(record)
        .onConflict((conflict) =>
          conflict.column('binding').doUpdateSet({
            challenge_hash: record.challenge_hash,
            expires_at: record.expires_at,
          }),
        )
        .execute();
    },
    async takeWebAuthnChallenge(binding, now) {
      const taken = await db
        .deleteFrom('webauthn_challenges')
        .where('binding', '=', binding)
        .returningAll()
        .executeTakeFirst();
      return taken && taken.expires_at > now ? taken : undefined;
    },
    async findWebAuthnChallenge(binding, now) {
      const found = await db
        .selectFrom('webauthn_challenges')
        .selectAll()
        .where('binding', '=', binding)
        .executeTakeFirst();
      return found && found.expires_at > now ? found : undefined;
    },
    async deleteExpiredWebAuthnChallenges(now) {
      const result = await db
        .deleteFrom('webauthn_challenges')
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
