import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliSandbox } from './cli.js';
import type { TestDatabase } from './databases.js';

/** The pepper of test apps (testHasher): CLI and server must share it to verify each other's hashes. */
export const TEST_PEPPER = 'test-pepper';
/** The encryption key of test apps (testConfig): a TOTP secret the CLI imports opens in the server. */
const TEST_ENCRYPTION_KEY = 'test-encryption-key';

/**
 * The CLI's environment for `db`: its SQLite file, or the PostgreSQL test database with the
 * test's schema first on the search path (libpq's `options`, read from the URL).
 */
export function cliEnvFor(box: CliSandbox, db: TestDatabase): Record<string, string> {
  let url = db.file ?? db.databaseUrl;
  if (db.kind === 'postgres') {
    const parsed = new URL(db.databaseUrl);
    parsed.searchParams.set('options', `-c search_path=${db.schema}`);
    url = parsed.toString();
  }
  return {
    ...box.env,
    SERVICE_DATABASE_URL: url,
    SERVICE_PASSWORD_PEPPER: TEST_PEPPER,
    SERVICE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  };
}

/** JSON lines, one object (or verbatim string) a line. */
export function jsonLines(lines: Array<object | string>): string {
  return (
    lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n'
  );
}

/** Writes an import file into the sandbox and returns its path. */
export function importFile(box: CliSandbox, name: string, content: string | Buffer): string {
  const path = join(box.dir, name);
  writeFileSync(path, content);
  return path;
}
