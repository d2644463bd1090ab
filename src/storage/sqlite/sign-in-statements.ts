import type BetterSqlite3 from 'better-sqlite3';
import type { Store } from '../../domain/store.js';
import { SESSION_COLUMNS, signInSql } from '../queries/sign-in-sql.js';
import { rawReader } from './raw-read.js';
import { inOpenTransaction } from './raw-write.js';

/** What a sign-in reads before its transaction. */
export type SignInReads = Pick<Store, 'findFlow' | 'findIdentityByUsername' | 'findTotpFactor'>;
/** What a sign-in writes inside its transaction. */
export type SignInTransactionWrites = Pick<
  Store,
  'completeFlow' | 'insertSession' | 'holdPasswordHash'
>;

const {
  findFlow,
  findIdentityByUsername,
  findTotpFactor,
  completeFlow,
  insertSession,
  holdPasswordHash,
} = signInSql(() => '?');
const SQL = {
  findFlow,
  findIdentityByUsername,
  findTotpFactor,
  completeFlow,
  insertSession,
  holdPasswordHash,
};

/**
 * The statements of a password or flow sign-in, prepared once on the connection instead of
 * a Kysely build and compile per call: a login runs each of them once, and at the rate
 * logins come (argon2 bounds them) their JavaScript is rarely hot. Rows are read as objects
 * with every column, as Kysely's `selectAll` reads them; the store contract suite holds
 * both to the same answers.
 *
 * The reads go through raw-read.ts, as the session check's do: direct between Kysely's
 * queries, through Kysely while one of its transactions holds the connection. The writes are only ever called inside a
 * Kysely transaction (sqliteStore hands them to the transaction's store), which holds the
 * connection and SQLite's write lock: they run on it directly, as part of that transaction.
 */
export function sqliteSignInStatements(
  raw: BetterSqlite3.Database,
  fallback: Store,
  timeoutMs: number,
): { reads: SignInReads; inTransaction: SignInTransactionWrites } {
  let prepared: Record<keyof typeof SQL, BetterSqlite3.Statement> | undefined;
  // Prepared on first use: the tables exist only once the store has been migrated.
  const statements = () =>
    (prepared ??= Object.fromEntries(
      Object.entries(SQL).map(([name, text]) => [name, raw.prepare(text)]),
    ) as Record<keyof typeof SQL, BetterSqlite3.Statement>);

  const read = rawReader(raw, timeoutMs);

  /** A step of the transaction that holds the connection (a write, or the hash's hold). */
  const inTransaction = <R>(step: () => R) => inOpenTransaction(raw, step);

  return {
    reads: {
      findFlow: read(
        (id) => statements().findFlow.get(id) as Awaited<ReturnType<Store['findFlow']>>,
        (id) => fallback.findFlow(id),
      ),
      findIdentityByUsername: read(
        (username) =>
          statements().findIdentityByUsername.get(username) as Awaited<
            ReturnType<Store['findIdentityByUsername']>
          >,
        (username) => fallback.findIdentityByUsername(username),
      ),
      findTotpFactor: read(
        (identityId) =>
          statements().findTotpFactor.get(identityId) as Awaited<
            ReturnType<Store['findTotpFactor']>
          >,
        (identityId) => fallback.findTotpFactor(identityId),
      ),
    },
    inTransaction: {
      completeFlow: (id, now, from = 'created') =>
        inTransaction(() => statements().completeFlow.run(id, from, now).changes === 1),
      insertSession: (record) =>
        inTransaction(() => {
          statements().insertSession.run(SESSION_COLUMNS.map((column) => record[column] ?? null));
        }),
      // The transaction's write lock keeps the hash: no other writer runs until it ends.
      holdPasswordHash: (id, expected) =>
        inTransaction(() => statements().holdPasswordHash.get(id, expected) !== undefined),
    },
  };
}
