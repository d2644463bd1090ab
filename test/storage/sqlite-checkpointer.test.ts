import BetterSqlite3 from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StorageUnavailable } from '../../src/storage/errors.js';
import { type Checkpointer, checkpointInWorker } from '../../src/storage/sqlite/checkpointer.js';
import { openSqlite } from '../../src/storage/sqlite/open.js';
import { cliSandbox } from '../helpers/cli.js';
import { startServe } from '../helpers/serve.js';

/**
 * docs/sqlite.md, "Checkpoints": under `tessera serve` the server's connection never
 * checkpoints the WAL itself; a worker thread does, and hands the job back if it fails.
 * Real files and a real worker; what is observed is the database file (it grows only when
 * a checkpoint copies pages into it) and the connection's own settings.
 */
describe('WAL checkpoints on a worker thread [sqlite]', () => {
  let dir: string;
  let file: string;
  let raw: BetterSqlite3.Database;
  let checkpointer: Checkpointer | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-checkpoint-'));
    file = join(dir, 'tessera.db');
    raw = new BetterSqlite3(file);
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    raw.exec('CREATE TABLE pages (id INTEGER PRIMARY KEY, body BLOB)');
  });

  afterEach(async () => {
    await checkpointer?.close();
    checkpointer = undefined;
    if (raw.open) raw.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Well past SQLite's 1,000-page threshold: one 4 KiB page a row, one commit each. */
  const writePages = () => {
    const insert = raw.prepare('INSERT INTO pages (body) VALUES (?)');
    for (let i = 0; i < 1500; i += 1) insert.run(Buffer.alloc(4000, i));
  };
  const databaseBytes = () => statSync(file).size;
  /** Polls without a deadline of its own: the test's timeout is the only one. */
  const until = async (condition: () => boolean) => {
    while (!condition()) await sleep(10);
  };
  const start = (options: { filename?: string; intervalMs: number }) => {
    const failures: unknown[] = [];
    checkpointer = checkpointInWorker({
      raw,
      filename: options.filename ?? file,
      intervalMs: options.intervalMs,
      onFailure: (error) => failures.push(error),
    });
    return failures;
  };

  it('without it, the committing connection checkpoints by itself (the control)', () => {
    const before = databaseBytes();
    writePages();
    expect(databaseBytes()).toBeGreaterThan(before + 1000 * 4096);
  });

  it("the server's connection no longer checkpoints: its writes stay in the WAL", () => {
    // The worker's first round is an hour away: nothing but the connection could copy pages.
    const failures = start({ intervalMs: 3_600_000 });
    const before = databaseBytes();
    writePages();
    expect(raw.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    expect(databaseBytes()).toBe(before);
    expect(failures).toEqual([]);
  });

  it('the worker copies the WAL into the database file', async () => {
    const failures = start({ intervalMs: 10 });
    writePages();
    await until(() => databaseBytes() > 1500 * 4096);
    // Everything is copied: a checkpoint now finds every frame already in the file.
    const [result] = raw.pragma('wal_checkpoint(PASSIVE)') as {
      log: number;
      checkpointed: number;
    }[];
    expect(result!.checkpointed).toBe(result!.log);
    expect(failures).toEqual([]);
  });

  it("close() ends the worker and its connection: the server's, last to close, removes the WAL", async () => {
    start({ intervalMs: 10 });
    writePages();
    await checkpointer!.close();
    raw.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
  });

  it('a worker that fails hands checkpoints back to the connection, and says so', async () => {
    // The worker cannot open this file: the thread ends with the error.
    const failures = start({ filename: join(dir, 'missing.db'), intervalMs: 10 });
    await until(() => failures.length > 0);
    expect(failures).toEqual([expect.objectContaining({ code: 'SQLITE_CANTOPEN' })]);
    expect(raw.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    const before = databaseBytes();
    writePages();
    expect(databaseBytes()).toBeGreaterThan(before + 1000 * 4096);
    // Closing after a failure does not wait for a thread that is gone.
    await checkpointer!.close();
  });
});

describe('the SQLite store and its checkpointer [sqlite]', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-checkpoint-'));
    file = join(dir, 'tessera.db');
  });
  afterEach(() => {
    vi.restoreAllMocks();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The store and the connection it opened (observed, not replaced). */
  const open = (checkpointer?: { onFailure(error: unknown): void }) => {
    const pragma = vi.spyOn(BetterSqlite3.prototype, 'pragma');
    const store = openSqlite({
      filename: file,
      busyTimeoutMs: 1000,
      synchronous: 'full',
      checkpointer,
    });
    const connection = pragma.mock.contexts[0] as BetterSqlite3.Database;
    pragma.mockRestore();
    return { store, connection };
  };

  it('with a checkpointer (tessera serve) the connection leaves checkpoints to it; without one (the CLI) SQLite keeps its own', async () => {
    const served = open({ onFailure: (error) => expect.unreachable(String(error)) });
    await served.store.migrate();
    expect(served.connection.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await served.store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);

    const cli = open();
    expect(cli.connection.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await cli.store.close();
  });

  it('is not ready once its connection cannot write (query-only), without writing to find out', async () => {
    const { store, connection } = open();
    await store.migrate();
    await expect(store.ping()).resolves.toBeUndefined();
    connection.pragma('query_only = ON');
    await expect(store.ping()).rejects.toBeInstanceOf(StorageUnavailable);
    connection.pragma('query_only = OFF');
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
  });

  it('is not ready on a database file it cannot write (SQLite opened it read-only), without writing to find out', async () => {
    const { store } = open();
    await store.migrate();
    await store.close();
    // The child may create the WAL and its index beside the file, as SQLite needs to.
    chmodSync(dir, 0o777);
    // Root writes whatever a file's mode says: as root, the child checks as nobody. It
    // becomes nobody itself once loaded, so the checkout may be private (a 0700 clone).
    const asSomeoneElse = process.getuid?.() === 0 ? ['65534'] : [];
    const ping = async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [
        '--import',
        'tsx',
        'test/storage/fixtures/ping.ts',
        file,
        ...asSomeoneElse,
      ]);
      return stdout;
    };
    chmodSync(file, 0o666);
    expect(await ping()).toBe('ready');
    chmodSync(file, 0o444);
    expect(await ping()).toBe('StorageUnavailable');
  });
});

describe('tessera serve checkpoints on its worker [sqlite]', () => {
  it('copies its migrations into the database file long before 1,000 WAL pages, and stops cleanly', async () => {
    const box = cliSandbox();
    try {
      const server = await startServe(box.env);
      // Switching a new file to WAL mode writes its first page there; the migrations go to
      // the WAL, far below SQLite's own threshold: only the worker copies them over.
      while (statSync(box.databaseFile).size <= 4096) await sleep(10);
      expect(await server.stop()).toBe(0);
      expect(existsSync(`${box.databaseFile}-wal`)).toBe(false);
      expect(server.stdout()).not.toContain('SQLite checkpoint worker failed');
    } finally {
      box.remove();
    }
  });
});
