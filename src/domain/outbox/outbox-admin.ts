import { toIso, type Clock } from '../../lib/clock.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { notFound, validationError } from '../errors.js';
import { requireListLimit } from '../list-limit.js';
import type { Store } from '../store.js';
import { OUTBOX_STATES, type OutboxRecord, type OutboxState } from './outbox.js';

/** An outbox row as `tessera mail list` shows it: never the payload (it holds codes). */
export interface OutboxEntry {
  id: string;
  kind: string;
  to: string;
  template: string;
  state: OutboxState;
  attempts: number;
  created_at: string;
  /** When a pending row is next tried; null once sent or failed. */
  next_attempt_at: string | null;
  last_error: string | null;
}

export function toOutboxEntry(record: OutboxRecord): OutboxEntry {
  return {
    id: record.id,
    kind: record.kind,
    to: record.target,
    template: record.topic,
    state: record.state,
    attempts: record.attempts,
    created_at: toIso(record.created_at),
    next_attempt_at: record.state === 'pending' ? toIso(record.next_attempt_at) : null,
    last_error: record.last_error,
  };
}

export function parseOutboxState(text: string | undefined): OutboxState | undefined {
  if (text === undefined) return undefined;
  if (!(OUTBOX_STATES as readonly string[]).includes(text)) {
    throw validationError(`state must be one of ${OUTBOX_STATES.join(', ')}`);
  }
  return text as OutboxState;
}

/** Mail in the outbox, newest first. */
export async function listMail(
  store: Store,
  options: { state?: OutboxState; limit?: number },
): Promise<OutboxEntry[]> {
  const records = await store.listOutboxRecords(requireListLimit(options.limit), {
    kind: 'mail',
    state: options.state,
  });
  return records.map(toOutboxEntry);
}

/**
 * Puts failed mail back in the queue, due now: one by id, or every failed one. Audited in
 * the same transaction. A row that is not failed (pending or sent) is refused as not found.
 */
export async function retryMail(
  deps: { store: Store; clock: Clock; audit: AuditLog },
  actor: Actor,
  target: { id: string } | { failed: true },
): Promise<string[]> {
  return deps.store.transaction(async (tx) => {
    const id = 'id' in target ? target.id : undefined;
    if (id !== undefined) {
      const record = await tx.findOutboxRecord(id);
      if (!record || record.kind !== 'mail') throw notFound();
      if (record.state !== 'failed')
        throw validationError(`mail ${id} is ${record.state}, not failed`);
    }
    const ids = await tx.requeueOutboxRecords(deps.clock.now(), id);
    await deps.audit.write(tx, actor, { action: 'mail_retry', details: { ids } });
    return ids;
  });
}
