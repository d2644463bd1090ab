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

/** One recorded use of a session, waiting to be written. */
export interface SessionUse {
  id: string;
  at: number;
}

/** At most this many uses wait in memory; beyond it a flush starts at once. */
const MAX_PENDING = 500;
/** Sessions remembered as recorded; past this the memory is dropped (writes stay correct). */
const MAX_REMEMBERED = 100_000;

/**
 * Records uses off the answer's path, in batches: the session check calls `record` and goes
 * on; the uses gathered over `flushMs` (SERVICE_AUDIT_FLUSH_MS, like the buffered audit
 * rows) are written in one transaction, so on SQLite a burst of first checks costs one
 * commit (one fsync) rather than one per session. A session recorded by this process in the
 * last interval is not recorded again, even while its write is under way and checks still
 * read the old value. A failed flush is reported to `onError` and dropped: a later check
 * records the use again, and "last used" is a convenience, never a security control.
 */
export class LastUseRecorder {
  #pending = new Map<string, number>();
  /** When this process last recorded each session: checks in between skip the write. */
  #recorded = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: {
      touchSessions(uses: SessionUse[], granularityMs: number): Promise<void>;
    },
    private readonly flushMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  record(session: SessionRecord, now: number): void {
    if (!lastUseIsStale(session, now)) return;
    const recorded = this.#recorded.get(session.id);
    if (recorded !== undefined && now - recorded < LAST_USE_GRANULARITY_MS) return;
    if (this.#recorded.size >= MAX_REMEMBERED) this.#recorded.clear();
    this.#recorded.set(session.id, now);
    this.#pending.set(session.id, now);
    if (this.#pending.size >= MAX_PENDING) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes what is pending; resolves once every flush started so far has ended. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = [...this.#pending].map(([id, at]) => ({ id, at }));
    this.#pending = new Map();
    this.#forgetOlderThan(Math.max(...batch.map((use) => use.at)) - LAST_USE_GRANULARITY_MS);
    this.#flushing = this.#flushing.then(async () => {
      if (batch.length === 0) return;
      try {
        await this.store.touchSessions(batch, LAST_USE_GRANULARITY_MS);
      } catch (error) {
        this.onError(error);
      }
    });
    return this.#flushing;
  }

  #forgetOlderThan(cutoff: number): void {
    for (const [id, at] of this.#recorded) if (at <= cutoff) this.#recorded.delete(id);
  }
}
