import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AuditRecord, AuditStore } from './audit.js';

/** Who did it: a service token, or the CLI (service_name `cli`, with the OS user in details). */
export interface Actor {
  service_name: string | null;
  service_id: string | null;
  details?: Record<string, unknown>;
}

export interface AuditEvent {
  action: string;
  target_identity?: string | null;
  outcome?: string;
  details?: Record<string, unknown>;
}

export function auditRecord(actor: Actor, event: AuditEvent, at: number): AuditRecord {
  return {
    id: newId(),
    at,
    action: event.action,
    service_name: actor.service_name,
    service_id: actor.service_id,
    target_identity: event.target_identity ?? null,
    outcome: event.outcome ?? 'ok',
    details: JSON.stringify(
      actor.details ? { ...actor.details, ...event.details } : (event.details ?? {}),
    ),
  };
}

/** Rows kept in memory while the database cannot take them; beyond this the oldest go. */
export const MAX_BUFFERED_AUDIT_ROWS = 10_000;

/**
 * The audit trail. Mutations write their row inside their own transaction (`write`);
 * reads and refusals are buffered (`enqueue`) and flushed in batches off the request path.
 * Worst-case loss on a crash (not a graceful stop, which flushes) is one flush interval.
 * A flush the database refuses (an outage) keeps its rows for the next one, up to
 * MAX_BUFFERED_AUDIT_ROWS; inserts are idempotent by id, so a retried batch never doubles.
 */
export class AuditLog {
  #buffer: AuditRecord[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #busy = false;

  constructor(
    private readonly store: AuditStore,
    private readonly clock: Clock,
    private readonly flushMs: number,
    private readonly onError: (error: unknown, lost: number) => void,
  ) {}

  /** Writes the row through `tx`, so it commits or rolls back with the mutation. */
  async write(tx: AuditStore, actor: Actor, event: AuditEvent): Promise<void> {
    await tx.insertAuditRecords([auditRecord(actor, event, this.clock.now())]);
  }

  enqueue(actor: Actor, event: AuditEvent): void {
    this.#buffer.push(auditRecord(actor, event, this.clock.now()));
    if (this.#buffer.length >= 500 && !this.#busy) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#buffer;
    this.#buffer = [];
    this.#flushing = this.#flushing.then(async () => {
      if (batch.length === 0) return;
      this.#busy = true;
      try {
        await this.store.insertAuditRecords(batch);
      } catch (error) {
        const kept = [...batch, ...this.#buffer];
        const lost = Math.max(0, kept.length - MAX_BUFFERED_AUDIT_ROWS);
        this.#buffer = kept.slice(lost);
        this.onError(error, lost);
        this.#timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
      } finally {
        this.#busy = false;
      }
    });
    return this.#flushing;
  }
}
