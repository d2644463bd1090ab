import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** SQLite's own automatic checkpoint threshold, in WAL pages (its default). */
const AUTOMATIC_CHECKPOINT_PAGES = 1000;

/**
 * The worker thread, as source text rather than a file beside this one: a file would have
 * to be found and loaded as this module was (dist/, the test suite's transpile, tsx's
 * loader, which Node 20 does not hand to worker threads), while this runs as it is
 * everywhere. It requires the driver by the path resolved here.
 *
 * - The connection waits for locks with SQLite's own busy timeout: that sleeps this
 *   thread, never the server's (PASSIVE itself never waits; opening the WAL may).
 * - `synchronous = NORMAL` (or FULL) syncs the WAL before a checkpoint copies its frames
 *   and the database file after: only then may a writer start the WAL over on top of them.
 * - An error (an I/O error, a corrupt file) is not caught: it ends the thread, and the
 *   server's connection takes its checkpoints back.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const BetterSqlite3 = require(workerData.driver);
const db = new BetterSqlite3(workerData.filename, { fileMustExist: true, timeout: 5000 });
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the worker and closes its connection; call before closing the server's own. */
  close(): Promise<void>;
}

export interface CheckpointerOptions {
  /** The server's connection, whose automatic checkpoint the worker replaces. */
  raw: BetterSqlite3.Database;
  /** The database file the worker opens (the same one, symbolic links resolved). */
  filename: string;
  /** How often the worker checkpoints. */
  intervalMs: number;
  /** The worker died or failed: the server's connection checkpoints again by itself. */
  onFailure(error: unknown): void;
}

/**
 * Takes WAL checkpoints off the server's thread. SQLite's automatic checkpoint runs inside
 * the commit that crosses 1,000 WAL pages, on the thread that committed: it copies the
 * pages into the database file and fsyncs the WAL and the database there, and every request
 * waits meanwhile. Here the server's connection never checkpoints (`wal_autocheckpoint` 0)
 * and a worker thread, with a connection of its own to the same file, runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`. PASSIVE neither waits for nor
 * blocks readers and writers; frames a reader still needs are left for the next round.
 *
 * Why a timer, not a trigger: the WAL file's size is no measure of what is left to copy
 * (SQLite rewinds the WAL in place after a complete checkpoint, so the file keeps its
 * largest size), and commits are made from several modules on the raw connection, so
 * counting them would need a hook in each. A checkpoint with nothing new to copy only
 * reads the shared-memory index; one every second bounds the WAL to about a second of
 * writes and the worker's fsyncs to two a second, whatever the load.
 *
 * Durability does not change: a commit is answered after wal-sync.ts has synced its WAL
 * frames, as before; the checkpoint's own fsyncs (WAL, then database) happen in the worker,
 * and SQLite lets a writer start the WAL over only once they are done.
 *
 * If the worker fails (it cannot open the file, a checkpoint fails, the thread dies), the
 * server's connection goes back to SQLite's automatic checkpoint, stalls included, and
 * `onFailure` logs it: the WAL never grows without bound unnoticed. The worker is not
 * restarted: what ended it (an I/O error, a corrupt file) would most likely end it again.
 */
export function checkpointInWorker(options: CheckpointerOptions): Checkpointer {
  const { raw, filename, intervalMs, onFailure } = options;
  raw.pragma('wal_autocheckpoint = 0');
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver, filename, intervalMs },
  });
  // A store nobody closed must not keep its process alive for the worker's sake.
  worker.unref();
  let state: 'running' | 'failed' | 'closing' = 'running';
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));

  const fail = (error: unknown) => {
    if (state !== 'running') return;
    state = 'failed';
    if (raw.open) raw.pragma(`wal_autocheckpoint = ${AUTOMATIC_CHECKPOINT_PAGES}`);
    onFailure(error);
  };
  worker.once('error', fail);
  worker.once('exit', (code) => fail(new Error(`the checkpoint worker exited with code ${code}`)));

  return {
    async close() {
      if (state === 'running') {
        state = 'closing';
        // Held until the thread has closed its connection: the server's connection, then
        // the last one, checkpoints and removes the WAL as it closes.
        worker.ref();
        worker.postMessage('close');
      }
      await exited;
    },
  };
}
