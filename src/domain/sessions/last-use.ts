import type { SessionRecord } from './session.js';

/**
 * How stale a session's `last_used_at` may get before a check records the use again. The
 * lists show "last used" to within these minutes; in exchange, the session check (whoami,
 * verify) writes at most once per session per interval instead of on every call, and that
 * write is one conditional UPDATE it never waits for (docs/account.md, "Last use").
 */
export const LAST_USE_GRANULARITY_MS = 5 * 60_000;

/** True when a check at `now` should record the use. */
export function lastUseIsStale(session: SessionRecord, now: number): boolean {
  return session.last_used_at === null || now - session.last_used_at >= LAST_USE_GRANULARITY_MS;
}

/**
 * Records uses off the answer's path: the session check calls `record` and goes on; the
 * UPDATE runs in the background. A session already being written is not written again by
 * this process meanwhile. A failed write is reported to `onError` and forgotten: the next
 * check after it tries again, and "last used" is a convenience, never a security control.
 */
export class LastUseRecorder {
  readonly #pending = new Map<string, Promise<void>>();

  constructor(
    private readonly store: {
      touchSession(id: string, at: number, staleBefore: number): Promise<void>;
    },
    private readonly onError: (error: unknown) => void,
  ) {}

  record(session: SessionRecord, now: number): void {
    if (!lastUseIsStale(session, now) || this.#pending.has(session.id)) return;
    const write = this.store
      .touchSession(session.id, now, now - LAST_USE_GRANULARITY_MS + 1)
      .catch(this.onError)
      .finally(() => this.#pending.delete(session.id));
    this.#pending.set(session.id, write);
  }

  /** Resolves once every write started so far has ended (shutdown, tests). */
  async settled(): Promise<void> {
    await Promise.all(this.#pending.values());
  }
}
