import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildServices } from '../../src/app.js';
import { createLogger } from '../../src/log.js';
import { testConfig, testHasher } from '../helpers/app.js';
import { type CliSandbox, cliSandbox, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/databases.js';

/** Issue 12 item 5: what a commit survives is the operator's choice (docs/sqlite.md). */
describe('SERVICE_SQLITE_SYNCHRONOUS [sqlite]', () => {
  // The connection itself always runs at NORMAL: under `full` the WAL is synced off the
  // server's thread before a writer is answered (test/storage/wal-sync.test.ts).
  it.each([
    ['full', 1],
    ['normal', 1],
    ['unset (default)', 1],
  ])('%s: PRAGMA synchronous reads back %i on a WAL connection', async (value, expected) => {
    const db = await createTestDatabase('sqlite');
    const env: Record<string, string> = value.startsWith('unset')
      ? {}
      : { SERVICE_SQLITE_SYNCHRONOUS: value };
    // Observes which connection the service opens (the real one; nothing is replaced).
    const pragma = vi.spyOn(BetterSqlite3.prototype, 'pragma');
    const services = await buildServices(
      testConfig(db.databaseUrl, env),
      createLogger({ level: 'silent' }),
      {
        hasher: await testHasher(),
      },
    );
    const connection = pragma.mock.contexts[0] as BetterSqlite3.Database;
    pragma.mockRestore();
    try {
      expect(connection.name).toBe(db.file);
      expect(connection.pragma('synchronous', { simple: true })).toBe(expected);
      expect(connection.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      await services.close();
      await db.drop();
    }
    // Closed although no Kysely query ran (Kysely then skips its driver's destroy).
    expect(connection.open).toBe(false);
  });

  describe('a bad value', () => {
    let box: CliSandbox;
    beforeAll(() => {
      box = cliSandbox();
    });
    afterAll(() => box?.remove());

    it.each(['off', 'FULL'])('%s stops start-up with the one-line message', async (value) => {
      const result = await runCli(['svc', 'list'], {
        ...box.env,
        SERVICE_SQLITE_SYNCHRONOUS: value,
      });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([
        `tessera: validation_error: SERVICE_SQLITE_SYNCHRONOUS="${value}" is invalid: expected one of normal, full`,
      ]);
    });
  });
});
