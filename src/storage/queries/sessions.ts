import type { Kysely } from 'kysely';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { SessionRecord } from '../../domain/sessions/session.js';
import type { SessionStore } from '../../domain/sessions/session-store.js';
import type { Database } from '../schema.js';

export function sessionQueries(db: Kysely<Database>): SessionStore {
  return {
    async insertSession(record) {
      await db.insertInto('sessions').values(record).execute();
    },
    async findSessionByTokenHash(tokenHash) {
      const row = await db
        .selectFrom('sessions as s')
        .innerJoin('identities as i', 'i.id', 's.identity_id')
        .select([
          's.id as s_id',
          's.identity_id',
          's.authenticated_via',
          's.issued_at',
          's.expires_at',
          's.revoked_at',
          'i.username',
          'i.display_name',
          'i.avatar_url',
          'i.state',
          'i.created_at',
          'i.updated_at',
        ])
        .where('s.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (!row) return undefined;
      const session: SessionRecord = {
        id: row.s_id,
        token_hash: tokenHash,
        identity_id: row.identity_id,
        authenticated_via: row.authenticated_via,
        issued_at: row.issued_at,
        expires_at: row.expires_at,
        revoked_at: row.revoked_at,
      };
      const identity: IdentityRecord = {
        id: row.identity_id,
        username: row.username,
        display_name: row.display_name,
        avatar_url: row.avatar_url,
        state: row.state,
        password_hash: null,
        created_at: row.created_at,
        updated_at: row.updated_at,
      };
      return { session, identity };
    },
    findSessionById(id) {
      return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async revokeSessionById(id, at) {
      const found = await db
        .selectFrom('sessions')
        .select('revoked_at')
        .where('id', '=', id)
        .executeTakeFirst();
      if (!found) return false;
      if (found.revoked_at === null) {
        await db
          .updateTable('sessions')
          .set({ revoked_at: at })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .execute();
      }
      return true;
    },
    async revokeSessionByTokenHash(tokenHash, at) {
      await db
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('token_hash', '=', tokenHash)
        .where('revoked_at', 'is', null)
        .execute();
    },
    async revokeIdentitySessions(identityId, at) {
      const result = await db
        .updateTable('sessions')
        .set({ revoked_at: at })
        .where('identity_id', '=', identityId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async deleteExpiredSessions(now) {
      const result = await db
        .deleteFrom('sessions')
        .where('expires_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
