import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { Store } from '../store.js';
import type { AuditRecord } from './audit.js';

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

/** One row as a record: what `write` inserts with a mutation, and imports use. */
export function auditRecord(actor: Actor, event: AuditEvent, at: number): AuditRecord {
  const cells: Cells = [];
  pushRow(cells, actor, event, at);
  return rowsOf(cells)[0]!;
}

/**
 * Buffered rows, kept column by column in one flat array (`ROW_WIDTH` cells a row, in the
 * order of `rowsOf`) until a flush builds their records. A record object per buffered call
 * could outlive a young collection (rows wait for the flush); V8 then sometimes allocated
 * every later one straight in the old generation (allocation-site pretenuring), and what it
 * points to was promoted with it: at 20,000 verifies a second the old generation grew by
 * about 8 MB a second until a full collection (peak RSS 186-242 MB instead of 150, in some
 * runs; bench/README.md). Cells pushed onto one array are no object of their own.
 */
type Cells = Array<string | number | null>;
const ROW_WIDTH = 8;

/** Appends one row's cells in `rowsOf`'s order: a row's defaults are decided here only. */
function pushRow(cells: Cells, actor: Actor, event: AuditEvent, at: number): void {
  cells.push(
    newId(),
    at,
    event.action,
    actor.service_name,
    actor.service_id,
    event.target_identity ?? null,
    event.outcome ?? 'ok',
    JSON.stringify(actor.details ? { ...actor.details, ...event.details } : (event.details ?? {})),
  );
}

function rowsOf(cells: Cells): AuditRecord[] {
  const records: AuditRecord[] = [];
  for (let i = 0; i < cells.length; i += ROW_WIDTH) {
    records.push({
      id: cells[i] as string,
      at: cells[i + 1] as number,
      action: cells[i + 2] as string,
      service_name: cells[i + 3] as string | null,
      service_id: cells[i + 4] as string | null,
      target_identity: cells[i + 5] as string | null,
      outcome: cells[i + 6] as string,
      details: cells[i + 7] as string,
    });
  }
  return records;
}

/**
 * What follows the audit trail inside its transactions: the webhooks' emitter
 * (webhooks/webhook-emitter.ts), which turns rows into deliveries in the outbox.
 */
export interface AuditFollower {
  /** False when no row of these can emit anything: a buffered flush stays a plain insert. */
  mayEmit(records: readonly AuditRecord[]): boolean;
  emit(tx: Store, records: readonly AuditRecord[]): Promise<void>;
}

/** Rows kept in memory while the database cannot take them; beyond this the oldest go. */
export const MAX_BUFFERED_AUDIT_ROWS = 10_000;

/**
 * Buffered rows that start a flush at once rather than at the timer. Kept small for memory,
 * not speed: a row that waits through a few young-generation collections is promoted to
 * V8's old generation and stays there as garbage until a full collection. At 19,000
 * verifies a second on 2 cores, flushing at 500 rows let the heap grow until peak RSS was
 * 236-241 MB; at 100 it stayed at 160 MB (`npm run bench -- --only verify`), for about
 * 1-2 µs of CPU per verify (a commit per 100 rows instead of per 500). Two runs each: part
 * of that gap may have been the pretenuring the cell buffer below avoids (bench/README.md).
 */
const FLUSH_AT_ROWS = 100;

/**
 * The audit trail. Mutations write their row inside their own transaction (`write`);
 * reads and refusals are buffered (`enqueue`) and flushed in batches off the request path.
 * Worst-case loss on a crash (not a graceful stop, which flushes) is one flush interval.
 * A flush the database refuses (an outage) keeps its rows for the next one, up to
 * MAX_BUFFERED_AUDIT_ROWS; inserts are idempotent by id, so a retried batch never doubles.
 */
export class AuditLog {
  #buffer: Cells = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #busy = false;
  #follower: AuditFollower | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly flushMs: number,
    private readonly onError: (error: unknown, lost: number) => void,
  ) {}

  /** Set once at wiring (app.ts): every row written from then on is followed. */
  follow(follower: AuditFollower): void {
    this.#follower = follower;
  }

  /**
   * Writes the row through `tx`, so it commits or rolls back with the mutation; so do the
   * webhook deliveries it causes.
   */
  async write(tx: Store, actor: Actor, event: AuditEvent): Promise<void> {
    const records = [auditRecord(actor, event, this.clock.now())];
    await tx.insertAuditRecords(records);
    if (this.#follower?.mayEmit(records)) await this.#follower.emit(tx, records);
  }

  enqueue(actor: Actor, event: AuditEvent): void {
    pushRow(this.#buffer, actor, event, this.clock.now());
    if (this.#buffer.length >= FLUSH_AT_ROWS * ROW_WIDTH && !this.#busy) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const cells = this.#buffer;
    this.#buffer = [];
    this.#flushing = this.#flushing.then(async () => {
      if (cells.length === 0) return;
      const batch = rowsOf(cells);
      this.#busy = true;
      try {
        const follower = this.#follower;
        // Buffered rows (a failed sign-in, a browser sign-in) have no mutation of their own:
        // their deliveries commit with them, at least once from this flush on.
        if (follower?.mayEmit(batch)) {
          await this.store.transaction(async (tx) => {
            await tx.insertAuditRecords(batch);
            await follower.emit(tx, batch);
          });
        } else {
          await this.store.insertAuditRecords(batch);
        }
      } catch (error) {
        const kept = [...cells, ...this.#buffer];
        const lost = Math.max(0, kept.length / ROW_WIDTH - MAX_BUFFERED_AUDIT_ROWS);
        this.#buffer = kept.slice(lost * ROW_WIDTH);
        this.onError(error, lost);
        this.#timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
      } finally {
        this.#busy = false;
      }
    });
    return this.#flushing;
  }
}
