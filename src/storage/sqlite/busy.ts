import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Pauses between attempts on a lock another process holds: short at first (most writes
 * hold it for well under a millisecond), then every 25 ms, so a released lock is taken
 * within 25 ms and a long hold costs 40 cheap attempts a second.
 */
const PAUSES_MS = [1, 2, 5, 10, 20, 25];

/** SQLITE_BUSY and its extended codes (BUSY_RECOVERY, BUSY_SNAPSHOT, BUSY_TIMEOUT). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/** What to let go of while waiting (Kysely's connection, so other queries run meanwhile). */
export interface Hold {
  release(): void;
  reacquire(): Promise<void>;
}

/**
 * Called with the error of a first attempt: when the database was busy, tries `attempt`
 * again after a pause, until it succeeds, fails otherwise, or `timeoutMs` has passed
 * (then the last SQLITE_BUSY is thrown; storage turns it into StorageTimeout, a 504).
 *
 * This replaces SQLite's busy_timeout, which sleeps inside the synchronous call and so
 * freezes the whole event loop: every request, /healthz included, would wait for another
 * process's lock. Here the pauses are timers, and the server keeps answering.
 */
export async function retryWhileBusy<T>(
  first: unknown,
  attempt: () => T | Promise<T>,
  timeoutMs: number,
  hold?: Hold,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let error = first;
  for (let i = 0; isBusy(error); i++) {
    const left = deadline - performance.now();
    if (left <= 0) break;
    hold?.release();
    await sleep(Math.min(PAUSES_MS[Math.min(i, PAUSES_MS.length - 1)]!, left));
    await hold?.reacquire();
    try {
      return await attempt();
    } catch (next) {
      error = next;
    }
  }
  throw error;
}

/** `attempt` once synchronously (no extra cost when the database is free), then as above. */
export async function whenNotBusy<T>(attempt: () => T | Promise<T>, timeoutMs: number): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    return retryWhileBusy(error, attempt, timeoutMs);
  }
}
