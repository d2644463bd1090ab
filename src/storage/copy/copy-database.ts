import { createHash } from 'node:crypto';
import type { CopyEndpoint, Row } from './endpoint.js';
import { COPY_ORDER, MIGRATIONS_TABLE } from './tables.js';

export interface TableCopy {
  table: string;
  rows: number;
}

/** Why a copy was refused before anything was written; the CLI names it in one line. */
export type CopyRefusalReason =
  'target_not_empty' | 'same_database' | 'source_missing' | 'schema_mismatch';

export class CopyRefused extends Error {
  constructor(
    readonly reason: CopyRefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'CopyRefused';
  }
}

/** The target read back differently from what was written: everything was rolled back. */
export class CopyVerificationFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyVerificationFailed';
  }
}

/** Bound values per INSERT: under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_VALUES = 30_000;
const MAX_ROWS = 500;

/** Tables of `endpoint` that hold rows, among those a copy writes. */
export async function nonEmptyTables(endpoint: CopyEndpoint): Promise<TableCopy[]> {
  const present = new Set(await endpoint.tables());
  const found: TableCopy[] = [];
  for (const table of COPY_ORDER) {
    if (!present.has(table)) continue;
    const rows = await endpoint.count(table);
    if (rows > 0) found.push({ table, rows });
  }
  return found;
}

export function describeTables(tables: TableCopy[]): string {
  return tables.map(({ table, rows }) => `${table}: ${rows}`).join(', ');
}

/**
 * Copies every row of every table from `source` (one snapshot) into the empty, migrated
 * `target` (one transaction), then reads the target back: per table, the row count and an
 * order-independent digest of the rows' values must equal the source's, or nothing is
 * committed. Rows are copied as stored, sealed secrets included.
 */
export async function copyDatabase(
  source: CopyEndpoint,
  target: CopyEndpoint,
): Promise<TableCopy[]> {
  await assertSchema(source, 'source');
  await assertSchema(target, 'target');
  return source.transaction('snapshot', () =>
    target.transaction('write', async () => {
      const taken = await nonEmptyTables(target);
      if (taken.length > 0) throw notEmpty(taken);
      const copied: TableCopy[] = [];
      for (const table of COPY_ORDER) copied.push(await copyTable(source, target, table));
      return copied;
    }),
  );
}

export function notEmpty(tables: TableCopy[]): CopyRefused {
  return new CopyRefused(
    'target_not_empty',
    `the target database is not empty (${describeTables(tables)}); db copy writes only into an empty one`,
  );
}

/** Both sides must have exactly the tables COPY_ORDER lists: none left behind, none unknown. */
async function assertSchema(endpoint: CopyEndpoint, side: string): Promise<void> {
  const tables = (await endpoint.tables()).filter((table) => table !== MIGRATIONS_TABLE);
  const known = new Set<string>(COPY_ORDER);
  const unknown = tables.filter((table) => !known.has(table));
  const missing = COPY_ORDER.filter((table) => !tables.includes(table));
  if (unknown.length > 0 || missing.length > 0) {
    const parts = [
      unknown.length > 0 ? `tables db copy does not know: ${unknown.join(', ')}` : '',
      missing.length > 0 ? `missing tables: ${missing.join(', ')}` : '',
    ].filter(Boolean);
    throw new CopyRefused('schema_mismatch', `the ${side} database has ${parts.join('; ')}`);
  }
}

async function copyTable(
  source: CopyEndpoint,
  target: CopyEndpoint,
  table: string,
): Promise<TableCopy> {
  const columns = await source.columns(table);
  const targetColumns = await target.columns(table);
  if ([...columns].sort().join() !== [...targetColumns].sort().join()) {
    throw new CopyRefused(
      'schema_mismatch',
      `table ${table} has columns (${columns.join(', ')}) on the source and (${targetColumns.join(', ')}) on the target`,
    );
  }
  const size = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_VALUES / columns.length)));
  const written = new RowDigest();
  for await (const batch of source.batches(table, columns, size)) {
    written.add(batch);
    await target.insert(table, columns, batch);
  }
  const read = new RowDigest();
  for await (const batch of target.batches(table, columns, size)) read.add(batch);
  const inSource = await source.count(table);
  const inTarget = await target.count(table);
  if (inSource !== written.rows || inTarget !== written.rows || read.rows !== written.rows) {
    throw new CopyVerificationFailed(
      `table ${table}: ${inSource} row(s) in the source, ${written.rows} copied, ${inTarget} in the target`,
    );
  }
  if (read.value() !== written.value()) {
    throw new CopyVerificationFailed(`table ${table}: the target's rows read back differently`);
  }
  return { table, rows: written.rows };
}

/**
 * A digest of a multiset of rows, whatever order they are read in: the sum, modulo 2^256,
 * of each row's SHA-256. A value changed in type on the way (a number read back as text)
 * changes it.
 */
class RowDigest {
  rows = 0;
  #sum = 0n;

  add(batch: Row[]): void {
    for (const row of batch) {
      const hash = createHash('sha256').update(JSON.stringify(row)).digest('hex');
      this.#sum = (this.#sum + BigInt(`0x${hash}`)) & ((1n << 256n) - 1n);
      this.rows += 1;
    }
  }

  value(): string {
    return this.#sum.toString(16);
  }
}
