/**
 * A condition that makes the statement it gates commit without waiting for the WAL flush:
 * `set_config(…, true)` is `SET LOCAL synchronous_commit = off`, read by the commit of the
 * implicit transaction that one statement on an idle connection runs in, then undone with
 * that transaction, so the connection goes back to the pool with the server's setting.
 *
 * PostgreSQL's counterpart of SQLite's unsynced writes (sqlite/unsynced-writes.ts,
 * docs/postgresql.md): rate-limit counters, new login and registration flows, and buffered audit rows, which
 * no one is answered on durably. A server crash (not a client's) may lose the last such
 * commits (at most about three times `wal_writer_delay`, 0.6 s by default), never half of
 * one; the next synchronous commit makes every earlier one durable, as the WAL is flushed
 * in order. Only for `pool.query` (a connection of its own, outside any transaction): in a
 * transaction it would leave the whole transaction's commit unsynced.
 */
export const UNSYNCED_COMMIT = `set_config('synchronous_commit', 'off', true) IS NOT NULL`;

/** A one-row source for `INSERT INTO t (…)` in place of `VALUES (…)`, gated as above. */
export const unsyncedRow = (values: string) => `SELECT ${values} WHERE ${UNSYNCED_COMMIT}`;
