/**
 * Runs at most `concurrency` tasks at once and queues the rest, first come first served.
 * Used to keep password hashing from occupying every libuv thread during a login burst.
 */
export function createLimiter(concurrency: number) {
  let running = 0;
  const waiting: Array<() => void> = [];

  function release(): void {
    running -= 1;
    const next = waiting.shift();
    if (next) {
      running += 1;
      next();
    }
  }

  return async function limit<T>(task: () => Promise<T>): Promise<T> {
    if (running < concurrency) {
      running += 1;
    } else {
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    try {
      return await task();
    } finally {
      release();
    }
  };
}
