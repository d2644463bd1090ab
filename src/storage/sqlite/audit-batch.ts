import type BetterSqlite3 from 'better-sqlite3';
import type { AuditRecord } from '../../domain/audit/audit.js';
import type { Store } from '../../domain/store.js';
import { inOpenTransaction, rawWriter } from './raw-write.js';
import type { UnsyncedWriteOptions } from './unsynced-writes.js';
import { columnsOf } from '../queries/columns.js';

const COLUMNS = columnsOf<AuditRecord>({
  id: true,
  at: true,
  action: true,
  service_name: true,
  service_id: true,
  target_identity: true,
  outcome: true,
  details: true,
});

/** Rows per multi-row INSERT; the rest of a batch goes row by row. */
const CHUNK = 50;

function insertSql(rows: number): string {
  const tuple = `(${COLUMNS.map(() => '?').join(', ')})`;
  // Idempotent by id, like the Kysely insert: a batch retried after an ambiguous failure
  // is not written twice.
  return `INSERT INTO audit_log (${COLUMNS.join(', ')}) VALUES ${Array(rows).fill(tuple).join(', ')} ON CONFLICT (id) DO NOTHING`;
}

/**
 * The buffered audit flush (read-path rows written in batches off the request path) with
 * two statements prepared once, in one IMMEDIATE transaction, instead of a Kysely insert
 * built, compiled and prepared anew for every batch; and the same statements for the rows a
 * mutation writes inside its transaction (`inTransaction`). While one of
 * Kysely's transactions holds the connection, the batch goes through Kysely and waits.
 * While another process holds the write lock, the batch waits on timers (busy.ts), up to
 * `timeoutMs`, and the server keeps answering meanwhile.
 *
 * The batch does not wait for the WAL sync that SERVICE_SQLITE_SYNCHRONOUS=full gives an
 * answered write (wal-sync.ts): no one is answered on these rows, and the next synced
 * commit or checkpoint (about a second later under `serve`) makes them durable. Waiting
 * cost an fdatasync per flush (about 2 µs of the threadpool's CPU per verify), and held
 * each batch, and the rows buffered meanwhile, in memory through it.
 */
export function sqliteAuditBatch(options: UnsyncedWriteOptions): {
  batch: Pick<Store, 'insertAuditRecords'>;
  inTransaction: Pick<Store, 'insertAuditRecords'>;
} {
  const { raw, fallback, timeoutMs } = options;
  const write = rawWriter(raw, timeoutMs, undefined);
  let statements: { chunk: BetterSqlite3.Statement; single: BetterSqlite3.Statement } | undefined;
  const insertRows = (records: AuditRecord[]) => {
    statements ??= { chunk: raw.prepare(insertSql(CHUNK)), single: raw.prepare(insertSql(1)) };
    let next = 0;
    for (; next + CHUNK <= records.length; next += CHUNK) {
      statements.chunk.run(
        records.slice(next, next + CHUNK).flatMap((record) => COLUMNS.map((c) => record[c])),
      );
    }
    for (; next < records.length; next++) {
      const record = records[next]!;
      statements.single.run(COLUMNS.map((c) => record[c]));
    }
  };
  const insertAll = raw.transaction(insertRows);
  return {
    batch: {
      async insertAuditRecords(records) {
        if (records.length === 0) return;
        await write(
          () => insertAll.immediate(records),
          () => fallback.insertAuditRecords(records),
        );
      },
    },
    // The row of every audited mutation (a sign-in's among them), written with it: the same
    // statements, in the transaction that holds the connection.
    inTransaction: {
      insertAuditRecords: (records) => inOpenTransaction(raw, () => insertRows(records)),
    },
  };
}
