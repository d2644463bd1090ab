import { type FileHandle, open } from 'node:fs/promises';
import { StorageUnavailable } from '../errors.js';

/**
 * Makes commits durable without holding the event loop: with SERVICE_SQLITE_SYNCHRONOUS=full
 * the connection itself runs at `synchronous = NORMAL` (a commit writes the WAL but does not
 * fsync it), and a writer is answered only after `durable()` has fdatasync'ed the WAL file
 * on libuv's threadpool. That is exactly what `FULL` adds to `NORMAL` in WAL mode (SQLite
 * syncs the WAL at each commit), moved off the server's thread.
 *
 * Why this is as safe as `FULL`:
 * - The WAL is appended in commit order, so one fdatasync makes durable every commit
 *   written before it began. Commits that land while one runs wait for the next
 *   (group commit); none is acknowledged before a sync that started after it.
 * - Between its commit and its sync a write is visible to other requests but not yet
 *   acknowledged to its writer. A power cut in that window loses it whole (SQLite ignores
 *   an unsynced WAL tail), as it would lose a commit in flight under `FULL`. A later write
 *   that depends on it sits after it in the WAL, so it cannot outlive it.
 * - SQLite deletes the WAL only when the last connection closes, so the handle opened here
 *   names the live WAL for as long as this connection is open (checkpoints rewind or
 *   truncate the file in place).
 *
 * A failed fdatasync rejects every writer waiting on it (their requests answer 503): their
 * commits may not survive a crash, and they are not told otherwise.
 */
export interface WalSync {
  durable(): Promise<void>;
  close(): Promise<void>;
}

export function walSync(walPath: string): WalSync {
  let handle: Promise<FileHandle> | undefined;
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;

  function start(): Promise<void> {
    handle ??= open(walPath, 'r').catch((error: unknown) => {
      handle = undefined;
      throw error;
    });
    running = handle
      .then((file) => file.datasync())
      .catch((error: unknown) => {
        throw new StorageUnavailable(error, 'the SQLite WAL could not be synced to disk');
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  return {
    durable() {
      if (!running) return start();
      // This commit may have landed after the running sync began: wait for the next one,
      // which every commit arriving meanwhile shares.
      queued ??= running
        .catch(() => undefined)
        .then(() => {
          queued = undefined;
          return start();
        });
      return queued;
    },
    async close() {
      await Promise.allSettled([running, queued]);
      if (handle) await (await handle).close();
    },
  };
}
