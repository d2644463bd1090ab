import { DEFAULTS } from '../config.js';

/**
 * libuv's threadpool runs argon2 (up to SERVICE_HASH_CONCURRENCY hashes at once) and file
 * I/O, the SQLite WAL's fdatasync among it (docs/sqlite.md). At its default of 4 threads,
 * four hashes would hold every thread and a commit's sync would wait behind them, so the
 * pool gets two threads beyond the hashes. libuv reads the size once, when the pool first
 * starts: this module is imported before anything else. An operator's own
 * UV_THREADPOOL_SIZE wins; an invalid SERVICE_HASH_CONCURRENCY is reported by the config.
 */
const hashes = Number(process.env.SERVICE_HASH_CONCURRENCY ?? DEFAULTS.SERVICE_HASH_CONCURRENCY);
if (process.env.UV_THREADPOOL_SIZE === undefined && Number.isInteger(hashes) && hashes > 0) {
  process.env.UV_THREADPOOL_SIZE = String(Math.max(4, hashes + 2));
}
