import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import {
  type Deliverer,
  DeliveryFailure,
  type OutboxKind,
  type OutboxRecord,
  type OutboxSettlement,
  type OutboxStore,
} from './outbox.js';
import { nextAttemptAt } from './retry-policy.js';

/** What this process's worker did since it started, by kind: the /metrics counters. */
export class OutboxCounters {
  readonly sent = new Map<OutboxKind, number>();
  readonly failed = new Map<OutboxKind, number>();
  readonly retried = new Map<OutboxKind, number>();

  count(outcome: 'sent' | 'failed' | 'retried', kind: OutboxKind): void {
    this[outcome].set(kind, (this[outcome].get(kind) ?? 0) + 1);
  }
}

export interface WorkerLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface OutboxWorkerOptions {
  store: OutboxStore;
  clock: Clock;
  deliverers: Partial<Record<OutboxKind, Deliverer>>;
  counters: OutboxCounters;
  log: WorkerLog;
  /** Rows claimed and sent at once (concurrently). */
  batchSize?: number;
  /**
   * How long a claim holds its rows. Longer than a batch can take (the SMTP adapter's
   * timeouts bound each send): a worker that dies mid-batch delays its rows this long.
   */
  leaseMs?: number;
  /** The wait between looks at an empty outbox. */
  pollMs?: number;
  /** How long sent rows stay listed before the worker deletes them. */
  retentionMs?: number;
}

export const DEFAULT_LEASE_MS = 5 * 60_000;

/** Written once a second while the database is away: log.ts counts the repeats. */
export const OUTBOX_OUTAGE_MESSAGES = {
  unclaimed: 'outbox claim failed',
  unrecorded: 'outbox delivery could not be recorded',
} as const;
const PURGE_EVERY_MS = 60 * 60_000;

/**
 * Sends what the outbox holds, in every `tessera serve`: claims due rows in batches,
 * hands each to its kind's Deliverer, and settles it: `sent` once accepted, retried later
 * after a temporary failure (retry-policy.ts), `failed` after a permanent one.
 * At-least-once: a process that dies between the send and the settle sends again after
 * the lease, never zero times.
 */
export class OutboxWorker {
  readonly #options: Required<OutboxWorkerOptions>;
  #stopped = true;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** When sent rows were last deleted; the first purge comes an hour after the start. */
  #lastPurge: number | undefined;

  constructor(options: OutboxWorkerOptions) {
    this.#options = {
      batchSize: 10,
      leaseMs: DEFAULT_LEASE_MS,
      pollMs: 1000,
      retentionMs: 7 * 24 * 60 * 60_000,
      ...options,
    };
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule(0);
  }

  /**
   * Stops claiming at once; resolves when the sends in flight are settled, or after
   * `graceMs`: a send still hanging then is abandoned, and its row is sent again after
   * the lease (at-least-once), rather than holding the shutdown.
   */
  async stop(graceMs = Infinity): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      if (Number.isFinite(graceMs)) timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([this.#running, grace]);
    clearTimeout(timer);
    for (const deliverer of Object.values(this.#options.deliverers)) await deliverer.close?.();
  }

  /** One claim and its deliveries; the number of rows claimed. */
  async runOnce(): Promise<number> {
    const { store, clock, batchSize, leaseMs, deliverers } = this.#options;
    const token = newId();
    const kinds = Object.keys(deliverers) as OutboxKind[];
    const now = clock.now();
    const claimed = await store.claimOutboxRecords({
      now,
      leaseMs,
      limit: batchSize,
      kinds,
      token,
    });
    await Promise.all(claimed.map((record) => this.#attempt(record, token)));
    this.#lastPurge ??= now;
    if (now - this.#lastPurge >= PURGE_EVERY_MS) {
      this.#lastPurge = now;
      await store.deleteSentOutboxRecords(now - this.#options.retentionMs);
    }
    return claimed.length;
  }

  /** Runs claims until none finds a due row (tests, and a caller that wants the queue empty). */
  async drain(): Promise<void> {
    while ((await this.runOnce()) > 0);
  }

  #schedule(delayMs: number): void {
    this.#timer = setTimeout(() => {
      this.#running = this.runOnce()
        // A full batch suggests more are due: claim again at once.
        .then((count) => (count === this.#options.batchSize ? 0 : this.#options.pollMs))
        .catch((error: unknown) => {
          this.#options.log.warn({ err: error }, OUTBOX_OUTAGE_MESSAGES.unclaimed);
          return this.#options.pollMs;
        })
        .then((next) => {
          this.#running = undefined;
          if (!this.#stopped) this.#schedule(next);
        });
    }, delayMs);
  }

  async #attempt(record: OutboxRecord, token: string): Promise<void> {
    const { store, clock, deliverers, counters, log } = this.#options;
    const fields = { outbox_id: record.id, kind: record.kind, attempt: record.attempts };
    let settlement: OutboxSettlement;
    try {
      await deliverers[record.kind]!.deliver(record);
      settlement = { state: 'sent' };
    } catch (error) {
      const failure = error instanceof DeliveryFailure ? error.failure : 'temporary';
      const message = (error instanceof Error ? error.message : String(error)).slice(0, 1000);
      const retryAt =
        failure === 'temporary'
          ? nextAttemptAt(record.kind, record.attempts, record.created_at, clock.now())
          : null;
      settlement =
        retryAt === null
          ? { state: 'failed', error: message }
          : { state: 'pending', retryAt, error: message };
    }
    try {
      const settled = await store.settleOutboxRecord(record.id, token, settlement, clock.now());
      if (!settled) {
        // The lease ran out mid-send and another worker holds the row now: it settles it.
        log.warn(fields, 'outbox claim lost before its delivery was recorded');
        return;
      }
    } catch (error) {
      // Delivered (or not) but unrecorded: the row is due again after the lease.
      log.error({ ...fields, err: error }, OUTBOX_OUTAGE_MESSAGES.unrecorded);
      return;
    }
    if (settlement.state === 'sent') {
      counters.count('sent', record.kind);
      log.info(fields, 'outbox delivered');
    } else if (settlement.state === 'pending') {
      counters.count('retried', record.kind);
      const retry_at = new Date(settlement.retryAt).toISOString();
      log.warn({ ...fields, error: settlement.error, retry_at }, 'outbox delivery will be retried');
    } else {
      counters.count('failed', record.kind);
      log.error({ ...fields, error: settlement.error }, 'outbox delivery failed for good');
    }
  }
}
