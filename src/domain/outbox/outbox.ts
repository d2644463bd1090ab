import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';

/**
 * What the outbox carries. Each kind has its own Deliverer and its own maximum age
 * (retry-policy.ts): `mail` (mail/mail-deliverer.ts) and `webhook`
 * (webhooks/webhook-deliverer.ts, whose rows' `target` is the webhook's id).
 */
export type OutboxKind = 'mail' | 'webhook';

/** `pending` until a delivery is accepted (`sent`) or given up (`failed`). */
export type OutboxState = 'pending' | 'sent' | 'failed';
export const OUTBOX_STATES = ['pending', 'sent', 'failed'] as const;

export interface OutboxRecord {
  id: string;
  kind: OutboxKind;
  /** Where it goes: the recipient's address for mail, the webhook's id for a webhook. */
  target: string;
  /** What it is: the template name for mail, the event type for a webhook. */
  topic: string;
  /** The kind's own JSON document; emptied (`{}`) once sent, so no code outlives its delivery. */
  payload: string;
  state: OutboxState;
  /** Attempts started: a claim counts one, so a crash in the middle of a send counts too. */
  attempts: number;
  created_at: number;
  /**
   * When a worker may next claim the row. A claim moves it to the end of the claim's lease:
   * the row of a worker that died mid-send becomes due again then (at-least-once).
   */
  next_attempt_at: number;
  /** The claim that may settle the row; null while nobody holds it. */
  claim_token: string | null;
  last_error: string | null;
  updated_at: number;
}

/** A new row, written through the transaction of the change that causes it. */
export interface NewDelivery {
  kind: OutboxKind;
  target: string;
  topic: string;
  payload: unknown;
}

export interface OutboxClaim {
  now: number;
  /** The lease: claimed rows are due again at `now + leaseMs` unless settled before. */
  leaseMs: number;
  limit: number;
  kinds: OutboxKind[];
  token: string;
}

/** How a claimed row ends its attempt; each applies only while `token` still holds it. */
export type OutboxSettlement =
  | { state: 'sent' }
  | { state: 'pending'; retryAt: number; error: string }
  | { state: 'failed'; error: string };

export interface OutboxFilter {
  state?: OutboxState;
  kind?: OutboxKind;
}

export interface OutboxStore {
  insertOutboxRecord(record: OutboxRecord): Promise<void>;
  /**
   * Takes up to `limit` due rows for this claim, oldest due first, in one statement. On
   * PostgreSQL the rows are picked `FOR UPDATE SKIP LOCKED`: two instances never claim one
   * row; SQLite has one writer, and the claim is a single conditional UPDATE.
   */
  claimOutboxRecords(claim: OutboxClaim): Promise<OutboxRecord[]>;
  /** False when the claim was lost (its lease ran out and another worker took the row). */
  settleOutboxRecord(
    id: string,
    token: string,
    settlement: OutboxSettlement,
    now: number,
  ): Promise<boolean>;
  /** Newest first. */
  listOutboxRecords(limit: number, filter?: OutboxFilter): Promise<OutboxRecord[]>;
  findOutboxRecord(id: string): Promise<OutboxRecord | undefined>;
  /** Failed rows (all, or the one given) back to pending and due now; the ids requeued. */
  requeueOutboxRecords(now: number, id?: string): Promise<string[]>;
  countOutboxRecords(): Promise<Record<OutboxState, number>>;
  /** Deletes sent rows last touched before `before`; how many. */
  deleteSentOutboxRecords(before: number): Promise<number>;
}

/**
 * Queues a delivery through `tx`, the transaction of the change that causes it: the row
 * commits with the change or not at all, so a message is never sent for a change rolled
 * back nor lost for one committed. Workers send it after the commit.
 */
export async function enqueue(tx: OutboxStore, clock: Clock, entry: NewDelivery): Promise<string> {
  const now = clock.now();
  const id = newId();
  await tx.insertOutboxRecord({
    id,
    kind: entry.kind,
    target: entry.target,
    topic: entry.topic,
    payload: JSON.stringify(entry.payload),
    state: 'pending',
    attempts: 0,
    created_at: now,
    next_attempt_at: now,
    claim_token: null,
    last_error: null,
    updated_at: now,
  });
  return id;
}

/** Whether a failed attempt may be tried again: decides between retry and `failed`. */
export type FailureKind = 'temporary' | 'permanent';

/** A delivery that did not happen, and whether trying again can help. */
export class DeliveryFailure extends Error {
  constructor(
    readonly failure: FailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'DeliveryFailure';
  }
}

/**
 * Delivers one kind of outbox row. Resolves once the other side accepted it; throws a
 * DeliveryFailure (anything else thrown counts as temporary).
 */
export interface Deliverer {
  deliver(record: OutboxRecord): Promise<void>;
  /** Releases connections; the worker calls it when it stops. */
  close?(): Promise<void>;
}
