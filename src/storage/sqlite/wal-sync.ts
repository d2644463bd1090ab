import { type FileHandle, open } from 'node:fs/promises';
import { StorageUnavailable } from '../errors.js';

/**
 * Makes commits durable without holding the event loop: with SERVICE_SQLITE_SYNCHRONOUS=full
 * the connection itself runs at `synchronous = NORMAL` (a commit writes the WAL but does not
 * fsync it), and a writer is answered only after `durable()` has fdatasync'ed the WAL file
 * on libuv's threadpool. That is exactly what `FULL` adds to `NORMAL` in WAL mode (SQLite
 * syncs the WAL at each commit), moved off the server's thread.
 *
 * What this guarantees, against SQLite's own `FULL`:
 * - Every answered write is durable. The WAL is appended in commit order, so one
 *   fdatasync makes durable every commit written before it began. Commits that land while
 *   one runs wait for the next (group commit); none is answered before a sync that started
 *   after it.
 * - Unlike `FULL`, a commit is visible before it is durable: between its commit and its
 *   sync, other requests (and other processes) can read it, though its writer has not been
 *   answered. A power cut in that window loses it whole (SQLite ignores an unsynced WAL
 *   tail), so an answer that only read it may have shown state that is gone after the
 *   reboot. A later write that depends on it sits after it in the WAL, so it cannot
 *   outlive it.
 * - SQLite deletes the WAL only when the last connection closes, so the handle opened here
 *   names the live WAL for as long as this connection is open (checkpoints rewind or
 *   truncate the file in place).
 *
 * A failed fdatasync stops writes until the process restarts, as PostgreSQL does: after a
 * writeback error Linux may mark the lost pages clean, so a later fdatasync could succeed
 * without making the failed commit, or the ones chained after it in the WAL, durable. The
 * writers already waiting are answered 503 `unavailable` (their commits may or may not
 * survive a crash), every later `durable()` rejects, `failure` makes /readyz fail, and
 * `onFailure` lets the caller refuse writes before they commit.
 */
export interface WalSync {
  durable(): Promise<void>;
  /** The fdatasync failure that stopped this store's writes, if one did. */
  failure(): StorageUnavailable | undefined;
  close(): Promise<void>;
}

export function walSync(walPath: string, onFailure: () => void): WalSync {
  let handle: Promise<FileHandle> | undefined;
  let running: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  let failed: StorageUnavailable | undefined;

  function start(): Promise<void> {
    if (failed) return Promise.reject(failed);
    handle ??= open(walPath, 'r+').catch((error: unknown) => {
      handle = undefined;
      throw error;
    });
    running = handle
      .then((file) => file.datasync())
      .catch((error: unknown) => {
        if (!failed) {
          failed = new StorageUnavailable(error, 'the SQLite WAL could not be synced to disk');
          onFailure();
        }
        throw failed;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  return {
    durable() {
      if (failed) return Promise.reject(failed);
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
    failure: () => failed,
    async close() {
      await Promise.allSettled([running, queued]);
      if (handle) await (await handle).close().catch(() => undefined);
    },
  };
}
