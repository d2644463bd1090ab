import type { RateLimitHit } from '../../domain/rate-limit/rate-limit-store.js';
import type { Store } from '../../domain/store.js';
import { hitInOrder } from '../queries/rate-limits.js';
import { FLOW_COLUMNS, hitRateLimitArgs, signInSql } from '../queries/sign-in-sql.js';
import type { PostgresPool } from './pool.js';
import { unsyncedRow } from './unsynced-commit.js';

export type SignInStatements = Pick<
  Store,
  | 'hitRateLimit'
  | 'hitRateLimits'
  | 'insertFlow'
  | 'findFlow'
  | 'findIdentityByUsername'
  | 'findTotpFactor'
>;

// The counters' upsert and the flow's insert commit unsynced, as on SQLite.
const SQL = signInSql((n) => `$${n}`, unsyncedRow);

/**
 * What a login runs outside its transaction (the flow's creation and its counter, the
 * submission's limits and reads) as named prepared statements: PostgreSQL parses and plans
 * each once per connection, and no Kysely query is built or compiled per call. Each is one
 * statement on an idle connection of the pool, as through Kysely (a counter's upsert
 * commits on its own); reads and writes inside a transaction go through the transaction's
 * own store. The store contract suite holds them to the Kysely versions' answers.
 * A counter and a new flow commit without waiting for the WAL flush (unsynced-commit.ts).
 */
export function postgresSignInStatements(pool: PostgresPool): SignInStatements {
  async function first<Row extends object>(
    name: string,
    text: string,
    values: unknown[],
  ): Promise<Row | undefined> {
    return (await pool.query<Row>({ name, text, values })).rows[0];
  }

  async function hit(key: string, windowMs: number, now: number): Promise<RateLimitHit> {
    const row = await first<RateLimitHit>(
      'tessera_rate_limit_hit',
      SQL.hitRateLimit,
      hitRateLimitArgs(key, windowMs, now),
    );
    if (!row) throw new Error('the rate-limit upsert returned no row');
    return row;
  }

  return {
    hitRateLimit: hit,
    hitRateLimits: (counts, now) =>
      hitInOrder(counts, ({ key, windowMs }) => hit(key, windowMs, now)),
    async insertFlow(record) {
      await pool.query({
        name: 'tessera_flow_insert',
        text: SQL.insertFlow,
        values: FLOW_COLUMNS.map((column) => record[column]),
      });
    },
    findFlow: (id) => first('tessera_flow_by_id', SQL.findFlow, [id]),
    findIdentityByUsername: (username) =>
      first('tessera_identity_by_username', SQL.findIdentityByUsername, [username]),
    findTotpFactor: (identityId) => first('tessera_totp_factor', SQL.findTotpFactor, [identityId]),
  };
}
