/** What the gate says about one event: write it now, or hold it back and count it. */
export type GateVerdict = 'write' | 'hold';

/**
 * Lets the first of a run of identical events through and counts the ones that follow
 * within `windowMs`; when the window closes with some held back, `summarize` gets their
 * number once and a new window opens. A window that closes with nothing held ends the run,
 * so the next such event is written at once. During an outage this turns one line per
 * failed request, pooled connection or flush into one line, then one count per window.
 */
export class RepeatGate {
  readonly #held = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  offer(key: string, summarize: (held: number) => void): GateVerdict {
    const held = this.#held.get(key);
    if (held !== undefined) {
      this.#held.set(key, held + 1);
      return 'hold';
    }
    this.#open(key, summarize);
    return 'write';
  }

  #open(key: string, summarize: (held: number) => void): void {
    this.#held.set(key, 0);
    // unref: a pending count never keeps the process alive.
    setTimeout(() => {
      const held = this.#held.get(key) ?? 0;
      this.#held.delete(key);
      if (held === 0) return;
      this.#open(key, summarize);
      summarize(held);
    }, this.windowMs).unref();
  }
}
