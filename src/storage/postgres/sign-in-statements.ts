import type { RateLimitHit } from '../../domain/rate-limit/rate-limit-store.js';
import type { Store } from '../../domain/store.js';
import { hitInOrder } from '../queries/rate-limits.js';
import { FLOW_COLUMNS, hitRateLimitArgs, signInSql } from '../queries/sign-in-sql.js';
import { jsonReads } from './json-row.js';
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

/** The row a read of SignInStatements answers. */
type Row<Read extends keyof SignInStatements> = NonNullable<
  Awaited<ReturnType<SignInStatements[Read]>>
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
  // Rows read as one JSON value each (json-row.ts).
  const read = jsonReads(pool);
  const flow = read<Row<'findFlow'>>('tessera_flow_by_id', SQL.findFlow, 'object');
  const identity = read<Row<'findIdentityByUsername'>>(
    'tessera_identity_by_username',
    SQL.findIdentityByUsername,
    'object',
  );
  const totpFactor = read<Row<'findTotpFactor'>>(
    'tessera_totp_factor',
    SQL.findTotpFactor,
    'object',
  );

  async function hit(key: string, windowMs: number, now: number): Promise<RateLimitHit> {
    const [row] = (
      await pool.query<RateLimitHit>({
        name: 'tessera_rate_limit_hit',
        text: SQL.hitRateLimit,
        values: hitRateLimitArgs(key, windowMs, now),
      })
    ).rows;
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
    findFlow: (id) => flow([id]),
    findIdentityByUsername: (username) => identity([username]),
    findTotpFactor: (identityId) => totpFactor([identityId]),
  };
}
