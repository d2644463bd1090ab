import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type CellValue, type CopyEndpoint, type Row, quoteName } from './endpoint.js';

/**
 * SQLite, on a better-sqlite3 connection of the command's own. A CLI command may block
 * while it waits for another process's lock, so SQLite's own busy timeout is used here
 * (the service's connections never sleep: storage/sqlite/busy.ts).
 */
export function sqliteEndpoint(filename: string, busyTimeoutMs: number): CopyEndpoint {
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  const raw = new BetterSqlite3(filename, { timeout: Math.max(0, Math.floor(busyTimeoutMs)) });
  raw.pragma('foreign_keys = ON');

  return {
    dialect: 'sqlite',
    async tables() {
      return raw
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
        )
        .pluck()
        .all() as string[];
    },
    async columns(table) {
      const rows = raw.prepare(`PRAGMA table_info(${quoteName(table)})`).all() as {
        name: string;
        cid: number;
      }[];
      return rows.sort((a, b) => a.cid - b.cid).map((row) => row.name);
    },
    async count(table) {
      return raw
        .prepare(`SELECT COUNT(*) FROM ${quoteName(table)}`)
        .pluck()
        .get() as number;
    },
    async *batches(table, columns, size) {
      const select = raw
        .prepare(`SELECT ${columns.map(quoteName).join(', ')} FROM ${quoteName(table)}`)
        .raw(true);
      let batch: Row[] = [];
      for (const row of select.iterate() as IterableIterator<CellValue[]>) {
        batch.push(row);
        if (batch.length === size) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    },
    async insert(table, columns, rows) {
      if (rows.length === 0) return;
      const one = `(${columns.map(() => '?').join(', ')})`;
      raw
        .prepare(
          `INSERT INTO ${quoteName(table)} (${columns.map(quoteName).join(', ')}) VALUES ${rows.map(() => one).join(', ')}`,
        )
        .run(rows.flat());
    },
    async transaction(mode, work) {
      // A deferred transaction's first read fixes the snapshot it reads (WAL); IMMEDIATE
      // takes the write lock up front, so the copy cannot fail half-way on a busy target.
      raw.exec(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN');
      try {
        const result = await work();
        raw.exec('COMMIT');
        return result;
      } catch (error) {
        if (raw.inTransaction) raw.exec('ROLLBACK');
        throw error;
      }
    },
    async close() {
      raw.close();
    },
  };
}
