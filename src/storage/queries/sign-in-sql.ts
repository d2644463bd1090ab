import type { TotpFactorRecord } from '../../domain/second-factor/second-factor-store.js';
import type { Store } from '../../domain/store.js';
import { IDENTITY_COLUMNS } from './sessions.js';
import { columnsOf } from './columns.js';

type FlowRow = Parameters<Store['insertFlow']>[0];
type SessionRow = Parameters<Store['insertSession']>[0];

/** Every column of a flow row, in the order the prepared insert binds them. */
export const FLOW_COLUMNS = columnsOf<FlowRow>({
  id: true,
  csrf_token: true,
  return_to: true,
  state: true,
  failed_attempts: true,
  identity_id: true,
  first_method: true,
  issued_at: true,
  expires_at: true,
  token_format: true,
  kind: true,
});

/** Every column of a session row, in the order the prepared insert binds them. */
export const SESSION_COLUMNS = columnsOf<SessionRow>({
  id: true,
  token_hash: true,
  identity_id: true,
  authenticated_via: true,
  aal: true,
  issued_at: true,
  expires_at: true,
  revoked_at: true,
  last_used_at: true,
  user_agent: true,
  client_address: true,
  token_format: true,
});

const TOTP_FACTOR_COLUMNS = columnsOf<TotpFactorRecord>({
  identity_id: true,
  secret_sealed: true,
  confirmed_at: true,
  last_used_step: true,
  created_at: true,
});

/**
 * The SQL of a sign-in's statements that each dialect prepares once instead of building
 * them with Kysely per call (sqlite/sign-in-statements.ts, sqlite/unsynced-writes.ts,
 * postgres/sign-in-statements.ts); `placeholder(n)` writes the nth parameter in the
 * dialect's syntax. The Kysely versions in this folder are the reference: the store
 * contract suite holds both to the same answers on both databases.
 *
 * Reads name their columns, never `*`: on PostgreSQL a prepared `SELECT *` keeps the
 * columns of the table it was planned on, and once another instance's migration adds one
 * (a rolling upgrade) the server refuses it on every connection that prepared it ("cached
 * plan must not change result type"): password sign-in would fail there until a restart.
 */
export function signInSql(
  placeholder: (n: number) => string,
  /** The source of an inserted row; PostgreSQL's unsynced writes gate it (postgres/unsynced-commit.ts). */
  row: (values: string) => string = (values) => `VALUES (${values})`,
) {
  const list = (count: number, from = 1) =>
    Array.from({ length: count }, (_, i) => placeholder(from + i)).join(', ');
  return {
    /**
     * rate-limits.ts's upsert, bound as (key, end of a new window, now, now): concurrent
     * hits from any number of processes each see a distinct count.
     */
    hitRateLimit: `INSERT INTO rate_limits (key, count, reset_at) ${row(`${placeholder(1)}, 1, ${placeholder(2)}`)}
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN rate_limits.reset_at <= ${placeholder(3)} THEN 1 ELSE rate_limits.count + 1 END,
    reset_at = CASE WHEN rate_limits.reset_at <= ${placeholder(4)} THEN excluded.reset_at ELSE rate_limits.reset_at END
  RETURNING count, reset_at`,
    insertFlow: `INSERT INTO flows (${FLOW_COLUMNS.join(', ')}) ${row(list(FLOW_COLUMNS.length))}`,
    findFlow: `SELECT ${FLOW_COLUMNS.join(', ')} FROM flows WHERE id = ${placeholder(1)}`,
    findIdentityByUsername: `SELECT ${IDENTITY_COLUMNS.join(', ')} FROM identities WHERE username = ${placeholder(1)}`,
    findTotpFactor: `SELECT ${TOTP_FACTOR_COLUMNS.join(', ')} FROM totp_factors WHERE identity_id = ${placeholder(1)}`,
    /** Bound as (id, state it must be in, now). */
    completeFlow: `UPDATE flows SET state = 'completed' WHERE id = ${placeholder(1)} AND state = ${placeholder(2)} AND expires_at > ${placeholder(3)}`,
    /**
     * Bound as (id, expected hash): identities.ts's holdPasswordHash, which every password
     * sign-in runs in its transaction. PostgreSQL's text adds `FOR SHARE`
     * (postgres/transaction-writes.ts).
     */
    holdPasswordHash: `SELECT id FROM identities WHERE id = ${placeholder(1)} AND password_hash = ${placeholder(2)}`,
    insertSession: `INSERT INTO sessions (${SESSION_COLUMNS.join(', ')}) VALUES (${list(SESSION_COLUMNS.length)})`,
  };
}

/** The arguments of `hitRateLimit`'s statement, in order. */
export const hitRateLimitArgs = (key: string, windowMs: number, now: number) => [
  key,
  now + windowMs,
  now,
  now,
];
