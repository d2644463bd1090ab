import type { Kysely } from 'kysely';
import type { SecondFactorStore } from '../../domain/second-factor/second-factor-store.js';
import type { Database } from '../schema.js';

export function secondFactorQueries(db: Kysely<Database>): SecondFactorStore {
  return {
    findTotpFactor(identityId) {
      return db
        .selectFrom('totp_factors')
        .selectAll()
        .where('identity_id', '=', identityId)
        .executeTakeFirst();
    },
    async insertTotpFactor(record) {
      await db.insertInto('totp_factors').values(record).execute();
    },
    async deleteTotpFactor(identityId) {
      const result = await db
        .deleteFrom('totp_factors')
        .where('identity_id', '=', identityId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async confirmTotpFactor(identityId, at, step) {
      const result = await db
        .updateTable('totp_factors')
        .set({ confirmed_at: at, last_used_step: step })
        .where('identity_id', '=', identityId)
        .where('confirmed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async useTotpStep(identityId, step) {
      const result = await db
        .updateTable('totp_factors')
        .set({ last_used_step: step })
        .where('identity_id', '=', identityId)
        .where('confirmed_at', 'is not', null)
        .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async resealTotpSecret(identityId, previous, sealed) {
      await db
        .updateTable('totp_factors')
        .set({ secret_sealed: sealed })
        .where('identity_id', '=', identityId)
        .where('secret_sealed', '=', previous)
        .execute();
    },
    listUnusedRecoveryCodes(identityId) {
      return db
        .selectFrom('recovery_codes')
        .selectAll()
        .where('identity_id', '=', identityId)
        .where('used_at', 'is', null)
        .execute();
    },
    async useRecoveryCode(identityId, codeHash, at) {
      const result = await db
        .updateTable('recovery_codes')
        .set({ used_at: at })
        .where('identity_id', '=', identityId)
        .where('code_hash', '=', codeHash)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async replaceRecoveryCodes(identityId, codeHashes, at) {
      await db.deleteFrom('recovery_codes').where('identity_id', '=', identityId).execute();
      if (codeHashes.length === 0) return;
      await db
        .insertInto('recovery_codes')
        .values(
          codeHashes.map((code_hash) => ({
            identity_id: identityId,
            code_hash,
            created_at: at,
            used_at: null,
          })),
        )
        .execute();
    },
    async deleteRecoveryCodes(identityId) {
      const result = await db
        .deleteFrom('recovery_codes')
        .where('identity_id', '=', identityId)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
