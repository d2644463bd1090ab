import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import BetterSqlite3 from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { validationError } from '../../domain/errors.js';
import type {
  SourceDatabase,
  SourceInputs,
} from '../../domain/identity-transfer/sources/source.js';
import { pgDriver } from '../../storage/postgres/driver.js';

/**
 * The exports `identity import --from` reads, as files and databases. Everything is read
 * before the import checks a line, and a file that is not what it should be (not UTF-8, not
 * JSON, a CSV cut short) is refused naming the file, before anything is written.
 */
export const sourceInputs: SourceInputs = {
  async json(path) {
    const content = await text(path);
    try {
      return JSON.parse(content.replace(/^\uFEFF/, '')) as unknown;
    } catch (error) {
      throw validationError(`${path} is not JSON (cut short?): ${(error as Error).message}`);
    }
  },
  async jsonLines(path) {
    const lines = (await text(path)).replace(/^\uFEFF/, '').split('\n');
    const values: unknown[] = [];
    lines.forEach((line, index) => {
      if (line.trim() === '') return;
      try {
        values.push(JSON.parse(line));
      } catch {
        throw validationError(`${path}: line ${index + 1} is not JSON (cut short?)`);
      }
    });
    return values;
  },
  async csv(path) {
    try {
      return parse(await text(path), {
        columns: true,
        bom: true,
        skip_empty_lines: true,
      }) as Array<Record<string, string>>;
    } catch (error) {
      if ((error as { code?: string }).code === undefined) throw error;
      throw validationError(
        `${path} is not CSV with a header row (cut short?): ${(error as Error).message}`,
      );
    }
  },
  async database(location) {
    return /^postgres(ql)?:\/\//.test(location) ? postgres(location) : sqlite(location);
  },
};

/** A file's text: gunzipped when compressed, and strictly UTF-8. */
async function text(path: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw validationError(
      `cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch {
      throw validationError(`${path} is not a complete gzip file`);
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw validationError(`${path} is not UTF-8`);
  }
}

/** `schema.table` or `table`, each part quoted. */
const quoted = (table: string) =>
  table
    .split('.')
    .map((part) => `"${part.replaceAll('"', '""')}"`)
    .join('.');

async function postgres(url: string): Promise<SourceDatabase> {
  // Through the store's driver: the same BIGINT parser as the service's own reads.
  const client = new (pgDriver().Client)({ connectionString: url });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw validationError(`cannot connect to the source database: ${(error as Error).message}`);
  }
  return {
    async rows(table) {
      const found = await client.query<{ found: string | null }>(
        'SELECT to_regclass($1)::text AS found',
        [quoted(table)],
      );
      if (found.rows[0]?.found == null) return null;
      return (await client.query(`SELECT * FROM ${quoted(table)}`)).rows as Array<
        Record<string, unknown>
      >;
    },
    close: () => client.end(),
  };
}

async function sqlite(file: string): Promise<SourceDatabase> {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (error) {
    throw validationError(`${file} is no SQLite database: ${(error as Error).message}`);
  }
  return {
    async rows(table) {
      const exists = db
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        .get(table);
      if (exists === undefined) return null;
      return db.prepare(`SELECT * FROM ${quoted(table)}`).all() as Array<Record<string, unknown>>;
    },
    async close() {
      db.close();
    },
  };
}
