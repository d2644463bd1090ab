import { type Kysely, sql } from 'kysely';
import type { AdminStore } from '../../domain/admin/admin-store.js';
import type { Database } from '../schema.js';

/**
 * The audit actions that are sign-ins (docs/admin.md), as migration 0018's partial index
 * `audit_log_sign_ins_idx` lists them: the week's sign-ins are read from that index alone,
 * never from the rows of every service call in the week. A change here needs a migration
 * changing the index (test/storage/query-plans.test.ts holds them together).
 */
export const SIGN_IN_ACTIONS = ['login', 'authenticate_password', 'authenticate_link'] as const;

const SUMMARY_COLUMNS = [
  'identities.id',
  'identities.username',
  'identities.display_name',
  'identities.avatar_url',
  'identities.email',
  'identities.email_verified_at',
  'identities.state',
  'identities.created_at',
  'identities.updated_at',
] as const;

/** `text` as a LIKE pattern matching it anywhere, `!` escaping LIKE's own wildcards. */
function containing(text: string): string {
  return `%${text.replace(/[!%_]/g, (char) => `!${char}`)}%`;
}

export function adminQueries(db: Kysely<Database>): AdminStore {
  return {
    async insertOperator(record) {
      const result = await db
        .insertInto('operators')
        .values(record)
        .onConflict((conflict) => conflict.column('identity_id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },
    async deleteOperator(identityId) {
      const result = await db
        .deleteFrom('operators')
        .where('identity_id', '=', identityId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) === 1;
    },
    findOperator(identityId) {
      return db
        .selectFrom('operators')
        .selectAll()
        .where('identity_id', '=', identityId)
        .executeTakeFirst();
    },
    async listOperators() {
      const rows = await db
        .selectFrom('operators')
        .innerJoin('identities', 'identities.id', 'operators.identity_id')
        .select([...SUMMARY_COLUMNS, 'operators.identity_id', 'operators.granted_at'])
        .orderBy('operators.granted_at')
        .orderBy('operators.identity_id')
        .execute();
      return rows.map(({ identity_id, granted_at, ...identity }) => ({
        identity_id,
        granted_at,
        identity,
      }));
    },
    searchIdentities({ text, state, offset, limit }) {
      let query = db.selectFrom('identities').select(SUMMARY_COLUMNS);
      if (text !== undefined) {
        // SQLite's LIKE ignores ASCII case and PostgreSQL's does not: the text comes in
        // lowercase, as usernames and addresses are stored, so both answer the same.
        query = query.where((eb) =>
          eb.or([
            eb('identities.id', '=', text),
            sql<boolean>`identities.username LIKE ${containing(text)} ESCAPE '!'`,
            sql<boolean>`identities.email LIKE ${containing(text)} ESCAPE '!'`,
          ]),
        );
      }
      if (state !== undefined) query = query.where('identities.state', '=', state);
      return query
        .orderBy('identities.created_at', 'desc')
        .orderBy('identities.id', 'desc')
        .limit(limit)
        .offset(offset)
        .execute();
    },
    async countSignIns(since, bucketMs, methods) {
      // The method is in the row's JSON details, written by JSON.stringify: the exact text
      // `"sign_in_method":"x"` (a value's own quotes come escaped) on both databases,
      // without their different JSON functions.
      const method = sql<string>`CASE
        WHEN action = 'authenticate_password' THEN 'password'
        WHEN action = 'authenticate_link' THEN 'link'
        ${sql.join(
          methods.map((id) => sql`WHEN details LIKE ${`%"sign_in_method":"${id}"%`} THEN ${id}`),
          sql` `,
        )}
        ELSE 'other' END`;
      const bucket = sql<number>`(at / ${sql.lit(bucketMs)})`;
      const rows = await db
        .selectFrom('audit_log')
        .select([
          bucket.as('bucket'),
          method.as('method'),
          sql<'ok' | 'failed'>`CASE WHEN outcome = 'ok' THEN 'ok' ELSE 'failed' END`.as('result'),
          (eb) => eb.fn.countAll<number>().as('count'),
        ])
        .where('at', '>=', since)
        // Written as literals, the very list of audit_log_sign_ins_idx's condition: only
        // then can either planner tell that the partial index holds every row asked for.
        .where(
          'action',
          'in',
          SIGN_IN_ACTIONS.map((action) => sql.lit(action)),
        )
        .where('outcome', '<>', 'second_factor_required')
        .groupBy([sql`1`, sql`2`, sql`3`])
        .execute();
      return rows.map((row) => ({ ...row, bucket: Number(row.bucket), count: Number(row.count) }));
    },
    async countLiveSessions(now) {
      const row = await db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirstOrThrow();
      return Number(row.count);
    },
    async countNewIdentities(since, bucketMs) {
      const bucket = sql<number>`(created_at / ${sql.lit(bucketMs)})`;
      const rows = await db
        .selectFrom('identities')
        .select([bucket.as('bucket'), (eb) => eb.fn.countAll<number>().as('count')])
        .where('created_at', '>=', since)
        .groupBy(sql`1`)
        .execute();
      return rows.map((row) => ({ bucket: Number(row.bucket), count: Number(row.count) }));
    },
    searchAuditRecords(search) {
      let query = db.selectFrom('audit_log').selectAll();
      if (search.action !== undefined) query = query.where('action', '=', search.action);
      const actor = search.actor;
      if (actor !== undefined) {
        query = query.where((eb) =>
          eb.or([eb('service_name', '=', actor), eb('service_id', '=', actor)]),
        );
      }
      if (search.target_identity !== undefined) {
        query = query.where('target_identity', '=', search.target_identity);
      }
      if (search.outcome !== undefined) query = query.where('outcome', '=', search.outcome);
      if (search.since !== undefined) query = query.where('at', '>=', search.since);
      if (search.until !== undefined) query = query.where('at', '<', search.until);
      return query
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .limit(search.limit)
        .offset(search.offset)
        .execute();
    },
  };
}
