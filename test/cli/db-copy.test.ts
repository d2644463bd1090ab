import { existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COPY_ORDER } from '../../src/storage/copy/tables.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';

/** The tables a migrated SQLite file has, its migrations' bookkeeping left out. */
function tablesOf(file: string): string[] {
  const raw = new BetterSqlite3(file, { readonly: true });
  try {
    return raw
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' AND name <> 'schema_migrations' ORDER BY name",
      )
      .pluck()
      .all() as string[];
  } finally {
    raw.close();
  }
}

/** `tessera db copy` between SQLite files (the PostgreSQL move: test/import/db-copy.test.ts). */
describe('tessera db copy [sqlite]', () => {
  let box: CliSandbox;
  beforeEach(() => {
    box = cliSandbox();
  });
  afterEach(() => box.remove());

  it('copies every table of the schema into a new file, with the db_copy audit entry', async () => {
    await cliJson(['svc', 'create', '--name', 'app', '--grant', 'identity_read'], box.env);
    const target = join(box.dir, 'copy', 'tessera.db');
    const summary = await cliJson<{ tables: { table: string; rows: number }[] }>(
      ['db', 'copy', '--to', `sqlite:${target}`],
      box.env,
    );
    expect(summary.tables.map((entry) => entry.table)).toEqual([...COPY_ORDER]);
    expect([...COPY_ORDER].sort()).toEqual(tablesOf(box.databaseFile));
    const rows = Object.fromEntries(summary.tables.map((entry) => [entry.table, entry.rows]));
    expect(rows.service_tokens).toBe(1);
    // svc_create and db_copy, both copied.
    expect(rows.audit_log).toBe(2);

    const copied = await cliJson<{ name: string }[]>(['svc', 'list'], {
      ...box.env,
      SERVICE_DATABASE_URL: target,
    });
    expect(copied.map((token) => token.name)).toEqual(['app']);
  });

  it('refuses to copy a database onto itself', async () => {
    const result = await runCli(['db', 'copy', '--to', box.databaseFile], box.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('tessera: validation_error: the target is the source database\n');
  });

  it('refuses a source file that does not exist, creating nothing', async () => {
    const missing = join(box.dir, 'typo.db');
    const target = join(box.dir, 'target.db');
    const result = await runCli(['db', 'copy', '--to', target], {
      ...box.env,
      SERVICE_DATABASE_URL: missing,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `tessera: validation_error: the source database ${missing} does not exist\n`,
    );
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(target)).toBe(false);
  });

  it('says what the target must share, naming the generated secrets to carry', async () => {
    // Neither secret set: on SQLite they are generated into the data directory.
    const generated = Object.fromEntries(
      Object.entries(box.env).filter(
        ([name]) => name !== 'SERVICE_PASSWORD_PEPPER' && name !== 'SERVICE_ENCRYPTION_KEY',
      ),
    );
    await cliJson(['migrate'], generated);
    const result = await runCli(['db', 'copy', '--to', join(box.dir, 'b.db')], generated);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `note: set SERVICE_ENCRYPTION_KEY on the target to the content of ${join(box.dir, 'encryption-key')}`,
    );
    expect(result.stdout).toContain(
      `note: set SERVICE_PASSWORD_PEPPER on the target to the content of ${join(box.dir, 'pepper')}`,
    );
  });
});
