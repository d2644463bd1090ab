import { validationError } from '../../errors.js';
import { lineProblem } from '../transfer-line.js';

/**
 * Imports from other systems (`tessera identity import --from <source>`): each source reads
 * that system's own export and turns every user into a line of Tessera's import format, so
 * the one import (import-identities.ts) checks and writes them with all its guarantees.
 */

/** A user of the source as an import line, before its username is settled (usernames.ts). */
export interface SourceUser {
  /** The source's own username, as it writes it; null when it has none. */
  username: string | null;
  /** The import line's other fields (transfer-line.ts), `username` aside. */
  line: ImportFields;
  /** Second factors the source has for this user, by kind (`totp`): the import carries none. */
  factors: string[];
  /** What of this user is not carried, and why, for the summary. */
  notes?: string[];
}

export interface ImportFields {
  id?: string;
  display_name?: string;
  avatar_url?: string;
  email?: string;
  email_verified?: boolean;
  state?: 'active' | 'disabled';
  created_at?: string;
  password_hash?: string;
  links?: Array<{ provider: string; subject: string; verified: boolean }>;
}

/**
 * One record of the source: a user to import, a user deliberately left out (`skipped`, with
 * why), or a record that cannot be read (`problem`: like a bad line, it stops the import).
 */
export type SourceEntry = { where: string } & (
  { user: SourceUser } | { skipped: string } | { problem: string }
);

/** Reads the exports a source names on the command line (adapters/source-exports/). */
export interface SourceInputs {
  /** One JSON document. */
  json(path: string): Promise<unknown>;
  /** JSON lines (gzip-compressed or not), each parsed. */
  jsonLines(path: string): Promise<unknown[]>;
  /** CSV with a header row: one object per row, keyed by column. */
  csv(path: string): Promise<Array<Record<string, string>>>;
  /** A PostgreSQL connection string or an SQLite file, opened for reading. */
  database(location: string): Promise<SourceDatabase>;
}

export interface SourceDatabase {
  /** Every row of a table, or null when there is no such table. */
  rows(table: string): Promise<Array<Record<string, unknown>> | null>;
  close(): Promise<void>;
}

export interface SourceOptions {
  /** Where a database source's tables are, when not where the source keeps them. */
  schema?: string;
  /** Now, in epoch milliseconds: a ban that has run out leaves its user active. */
  now: number;
}

export interface Source {
  /** What the operator passes after the source name, for messages. */
  usage: string;
  read(args: string[], inputs: SourceInputs, options: SourceOptions): Promise<SourceEntry[]>;
}

/**
 * One record's entry: the conversion's validation failure becomes the record's problem, so
 * a source reports every bad record at once, each by where it is.
 */
export function entry(where: string, convert: () => SourceUser | { skipped: string }): SourceEntry {
  try {
    const result = convert();
    return 'skipped' in result ? { where, skipped: result.skipped } : { where, user: result };
  } catch (error) {
    return { where, problem: lineProblem(error) };
  }
}

export function requireArgs(args: string[], min: number, max: number, usage: string): void {
  if (args.length < min || args.length > max) {
    throw validationError(`expected ${usage}`);
  }
}

type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string field, or undefined when absent, null or empty. */
export function text(object: Json, field: string): string | undefined {
  const value = object[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw validationError(`${field} must be a string`);
  return value;
}

/** A boolean as JSON, SQLite (0/1) and CSV (`true`/`false`) write it; absent is false. */
export function flag(object: Json, field: string): boolean {
  const value = object[field];
  if (value === undefined || value === null || value === '') return false;
  if (value === true || value === 1 || value === 'true' || value === 't' || value === '1') {
    return true;
  }
  if (value === false || value === 0 || value === 'false' || value === 'f' || value === '0') {
    return false;
  }
  throw validationError(`${field} must be a boolean`);
}

/**
 * A time as the sources write it (ISO 8601, PostgreSQL's `2024-01-15 10:20:30.123+00`, a
 * Date, epoch milliseconds) in ISO 8601; undefined when absent.
 */
export function time(object: Json, field: string): string | undefined {
  const value = object[field];
  if (value === undefined || value === null || value === '') return undefined;
  let date: Date | undefined;
  if (value instanceof Date) date = value;
  else if (typeof value === 'number') date = new Date(value);
  else if (typeof value === 'string') {
    // PostgreSQL's text form: a space for the T, and an offset of hours only.
    const iso = value.replace(' ', 'T').replace(/(:[0-9]{2}(?:\.[0-9]+)?[+-][0-9]{2})$/, '$1:00');
    date = /^[0-9]+$/.test(value) ? new Date(Number(value)) : new Date(iso);
  }
  if (date === undefined || Number.isNaN(date.getTime())) {
    throw validationError(`${field} must be a time`);
  }
  return date.toISOString();
}

/** A JSON column: an object already (JSON, PostgreSQL) or its text (CSV, SQLite). */
export function jsonColumn(object: Json, field: string): Json {
  const value = object[field];
  if (value === undefined || value === null || value === '') return {};
  if (isObject(value)) return value;
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      if (isObject(parsed)) return parsed;
    } catch {
      // refused below
    }
  }
  throw validationError(`${field} must be a JSON object`);
}

/** Throws when `value` is not what the source's export holds at this place. */
export function expectArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw validationError(`${what} must be an array`);
  return value;
}
