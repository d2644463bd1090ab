import type { PasswordHasher } from '../../src/domain/passwords/password-hasher.js';

/**
 * A real hasher whose next verifications can be held after they ran: `hold(n)` makes the
 * next `n` calls of `verify` compute their answer (the real argon2) and then wait for
 * `release()`; later calls pass straight through. A test can so commit a password change
 * between a sign-in's verification and its mint: real requests, a real database, only the
 * order pinned down.
 */
export interface GatedHasher {
  hasher: PasswordHasher;
  hold(count: number): void;
  /** Resolves once every verification `hold` asked for is waiting. */
  held(): Promise<void>;
  release(): void;
}

export function gatedHasher(inner: PasswordHasher): GatedHasher {
  let toHold = 0;
  let opened: () => void = () => undefined;
  let gate = Promise.resolve();
  let allHeld: () => void = () => undefined;
  let allHeldPromise = Promise.resolve();

  // Inherits every other method and property (peppers, foreignScheme…) from the real one.
  const hasher: PasswordHasher = Object.create(inner);
  hasher.verify = async (hash, password) => {
    const ok = await inner.verify(hash, password);
    if (toHold > 0) {
      toHold -= 1;
      if (toHold === 0) allHeld();
      await gate;
    }
    return ok;
  };
  return {
    hasher,
    hold(count) {
      toHold = count;
      gate = new Promise((resolve) => (opened = resolve));
      allHeldPromise = new Promise((resolve) => (allHeld = resolve));
    },
    held: () => allHeldPromise,
    release: () => opened(),
  };
}
