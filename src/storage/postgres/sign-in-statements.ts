import type { RateLimitCount, RateLimitHit } from '../../domain/rate-limit/rate-limit-store.js';
import type { Store } from '../../domain/store.js';
import { hitInOrder } from '../queries/rate-limits.js';
import { FLOW_COLUMNS, hitRateLimitArgs, signInSql } from '../queries/sign-in-sql.js';
import { jsonReads } from './json-row.js';
import type { PostgresPool } from './pool.js';
import { UNSYNCED_COMMIT, unsyncedRow } from './unsynced-commit.js';

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
 * `hitRateLimits` of `n` counters as one statement: one round trip and one commit where
 * one upsert after another were n (a flow's submission counts its address and its
 * username). Each upsert (the single counter's text) is a CTE whose row exists only while
 * the counter before it is within its limit, so the keys after the first refusal are not
 * counted, as in `hitInOrder`; each reads the one before it, so the counters are locked in
 * the keys' order. Bound as each counter's `hitRateLimitArgs`, then the limits of all but
 * the last, which nothing reads (PostgreSQL cannot type a parameter no expression uses).
 * Built once per length.
 */
const hitChainSql = (() => {
  const built = new Map<number, string>();
  const build = (n: number): string => {
    const hits = Array.from({ length: n }, (_, i) => {
      // The first one gates the commit (SET LOCAL: the whole statement's transaction).
      const gate = i === 0 ? UNSYNCED_COMMIT : `(SELECT count FROM hit${i - 1}) <= $${4 * n + i}`;
      const upsert = signInSql(
        (p) => `$${4 * i + p}`,
        (values) => `SELECT ${values} WHERE ${gate}`,
      ).hitRateLimit;
      return `hit${i} AS (${upsert})`;
    });
    const rows = hits.map((_, i) => `SELECT ${i} AS i, count, reset_at FROM hit${i}`);
    return `WITH ${hits.join(',\n')}\n${rows.join(' UNION ALL ')} ORDER BY i`;
  };
  return (n: number): string => {
    let text = built.get(n);
    if (text === undefined) built.set(n, (text = build(n)));
    return text;
  };
})();

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

  async function hitChain(counts: readonly RateLimitCount[], now: number): Promise<RateLimitHit[]> {
    const { rows } = await pool.query<RateLimitHit & { i: number }>({
      name: `tessera_rate_limit_hits_${counts.length}`,
      text: hitChainSql(counts.length),
      values: [
        ...counts.flatMap(({ key, windowMs }) => hitRateLimitArgs(key, windowMs, now)),
        ...counts.slice(0, -1).map(({ limit }) => limit),
      ],
    });
    return rows.map(({ count, reset_at }) => ({ count, reset_at }));
  }

  return {
    hitRateLimit: hit,
    hitRateLimits: (counts, now) =>
      // One key is the single upsert; a key counted twice in one statement would be a row
      // updated twice, which PostgreSQL refuses, so such a list is counted one by one.
      counts.length > 1 && new Set(counts.map(({ key }) => key)).size === counts.length
        ? hitChain(counts, now)
        : hitInOrder(counts, ({ key, windowMs }) => hit(key, windowMs, now)),
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
