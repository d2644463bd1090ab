import type { Store } from '../../src/domain/store.js';

/** The names of the store methods called, in order, including those inside transactions. */
export interface StoreCalls {
  readonly names: string[];
  /** How many calls of these methods since the last `reset`. */
  count(...methods: (keyof Store)[]): number;
  reset(): void;
}

/**
 * Instruments `store` in place: every method call is recorded by name before it runs, and
 * each transaction's store is instrumented the same way. Proves a request touched no
 * storage at all (or only some of it), whatever the database.
 */
export function recordStoreCalls(store: Store): StoreCalls {
  const names: string[] = [];
  const wrapped = new WeakSet<Store>();
  const wrap = (target: Store): Store => {
    if (wrapped.has(target)) return target;
    wrapped.add(target);
    for (const key of Object.keys(target) as (keyof Store)[]) {
      const original = target[key];
      if (typeof original !== 'function') continue;
      const bound = (original as (...args: unknown[]) => unknown).bind(target);
      (target as unknown as Record<string, unknown>)[key] =
        key === 'transaction'
          ? (work: (tx: Store) => Promise<unknown>) => {
              names.push(key);
              return bound((tx: Store) => work(wrap(tx)));
            }
          : (...args: unknown[]) => {
              names.push(key);
              return bound(...args);
            };
    }
    return target;
  };
  wrap(store);
  return {
    names,
    count: (...methods) => names.filter((name) => (methods as string[]).includes(name)).length,
    reset: () => void names.splice(0),
  };
}
