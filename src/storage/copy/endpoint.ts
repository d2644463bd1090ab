/** A value as both drivers read and write Tessera's columns (TEXT, INTEGER, BIGINT). */
export type CellValue = string | number | null;
export type Row = CellValue[];

/**
 * One side of `tessera db copy`, on a connection of its own: table-level reads and writes
 * that know nothing of the domain's records, so a copy moves every column of every row as
 * stored (sealed secrets stay sealed). BIGINT reads as a number on both drivers, as in the
 * stores themselves.
 */
export interface CopyEndpoint {
  readonly dialect: 'sqlite' | 'postgres';
  /** The tables that exist (in the connection's schema), sorted. */
  tables(): Promise<string[]>;
  /** A table's columns, in their declared order. */
  columns(table: string): Promise<string[]>;
  count(table: string): Promise<number>;
  /** Every row of `table` as arrays in `columns` order, `size` rows at a time. */
  batches(table: string, columns: string[], size: number): AsyncIterable<Row[]>;
  insert(table: string, columns: string[], rows: Row[]): Promise<void>;
  /**
   * `work` inside one transaction: `snapshot` reads one consistent state of the database
   * (a running service's later writes are not seen); `write` commits only if `work`
   * returns, and rolls everything back if it throws.
   */
  transaction<T>(mode: 'snapshot' | 'write', work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** `"name"`: table and column names come from the catalog, quoted all the same. */
export function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
