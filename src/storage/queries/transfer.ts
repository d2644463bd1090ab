import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { TransferStore } from '../../domain/identity-transfer/transfer-store.js';
import type { LinkKey } from '../../domain/links/link.js';
import type { Database } from '../schema.js';

/**
 * Rows per statement: 500 identities are 5,000 bound values, far under SQLite's 32,766 and
 * PostgreSQL's 65,535, and few statements per batch keep a bulk import fast.
 */
const CHUNK = 500;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) {
    out.push(items.slice(start, start + size));
  }
  return out;
}

export function transferQueries(db: Kysely<Database>): TransferStore {
  return {
    async existingUsernames(usernames) {
      const found: string[] = [];
      for (const part of chunks(usernames)) {
        const rows = await db
          .selectFrom('identities')
          .select('username')
          .where('username', 'in', part)
          .execute();
        found.push(...rows.map((row) => row.username));
      }
      return found;
    },
    async existingEmails(emails) {
      const found: string[] = [];
      for (const part of chunks(emails)) {
        const rows = await db
          .selectFrom('identities')
          .select('email')
          .where('email', 'in', part)
          .execute();
        found.push(...rows.map((row) => row.email!));
      }
      return found;
    },
    async existingIdentityIds(ids) {
      const found: string[] = [];
      for (const part of chunks(ids)) {
        const rows = await db
          .selectFrom('identities')
          .select('id')
          .where('id', 'in', part)
          .execute();
        found.push(...rows.map((row) => row.id));
      }
      return found;
    },
    async existingLinks(keys) {
      // Per provider, so each lookup uses the (provider, subject) primary key.
      const byProvider = new Map<string, string[]>();
      for (const { provider, subject } of keys) {
        byProvider.set(provider, [...(byProvider.get(provider) ?? []), subject]);
      }
      const found: LinkKey[] = [];
      for (const [provider, subjects] of byProvider) {
        for (const part of chunks(subjects)) {
          const rows = await db
            .selectFrom('links')
            .select(['provider', 'subject'])
            .where('provider', '=', provider)
            .where('subject', 'in', part)
            .execute();
          found.push(...rows);
        }
      }
      return found;
    },
    async insertIdentities(records) {
      for (const part of chunks(records)) await db.insertInto('identities').values(part).execute();
    },
    async insertLinks(records) {
      for (const part of chunks(records)) await db.insertInto('links').values(part).execute();
    },
    async insertTotpFactors(records) {
      for (const part of chunks(records)) {
        await db.insertInto('totp_factors').values(part).execute();
      }
    },
    exportPage({ afterId, state, limit }) {
      let query = db.selectFrom('identities').selectAll();
      if (afterId !== null) query = query.where('id', '>', afterId);
      if (state !== undefined) query = query.where('state', '=', state);
      return query.orderBy('id').limit(limit).execute();
    },
    async credentialHolders({ state }) {
      // Distinct holders: an identity with ten passkeys is one identity left without them.
      const holders = async (
        query: SelectQueryBuilder<Database, 'identities', { identity_id: string }>,
      ) => {
        const scoped = state === undefined ? query : query.where('identities.state', '=', state);
        const rows = await db
          .selectFrom(scoped.distinct().as('holders'))
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        return Number(rows.n);
      };
      return {
        totp: await holders(
          db
            .selectFrom('identities')
            .innerJoin('totp_factors', 'totp_factors.identity_id', 'identities.id')
            .where('totp_factors.confirmed_at', 'is not', null)
            .select('totp_factors.identity_id'),
        ),
        recovery_codes: await holders(
          db
            .selectFrom('identities')
            .innerJoin('recovery_codes', 'recovery_codes.identity_id', 'identities.id')
            .where('recovery_codes.used_at', 'is', null)
            .select('recovery_codes.identity_id'),
        ),
        passkeys: await holders(
          db
            .selectFrom('identities')
            .innerJoin('passkeys', 'passkeys.identity_id', 'identities.id')
            .select('passkeys.identity_id'),
        ),
      };
    },
    async linksOf(identityIds) {
      if (identityIds.length === 0) return [];
      return db
        .selectFrom('links')
        .selectAll()
        .where('identity_id', 'in', identityIds)
        .orderBy('identity_id')
        .orderBy('linked_at')
        .orderBy('provider')
        .orderBy('subject')
        .execute();
    },
  };
}
