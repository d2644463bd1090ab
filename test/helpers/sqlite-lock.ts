import { spawn } from 'node:child_process';
import { once } from 'node:events';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * The other process: it opens the file with better-sqlite3, takes the write lock with
 * BEGIN EXCLUSIVE (a backup, `tessera sweep`, an operator's sqlite3 shell) and keeps it
 * until told on stdin, or until its parent goes away.
 */
const HOLDER = `
const db = new (require('better-sqlite3'))(process.argv[1]);
db.exec('BEGIN EXCLUSIVE');
process.stdout.write('locked\\n');
const release = () => { db.exec('ROLLBACK'); db.close(); process.exit(0); };
process.stdin.once('data', release);
process.stdin.once('end', release);
`;

export interface LockHolder {
  /** Ends the other process's transaction (and the process); resolves once it exited. */
  release(): Promise<void>;
}

/** Starts a second process holding SQLite's write lock on `file`; resolves once it holds it. */
export async function holdWriteLock(file: string): Promise<LockHolder> {
  const child = spawn(process.execPath, ['-e', HOLDER, file], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const [chunk] = (await Promise.race([once(child.stdout, 'data'), exited])) as [unknown];
  if (String(chunk) !== 'locked\n') throw new Error(`the lock holder exited: ${String(chunk)}`);
  return {
    async release() {
      if (child.exitCode !== null) return;
      child.stdin.end('release\n');
      await exited;
    },
  };
}
