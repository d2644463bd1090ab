import { toIso, type Clock } from '../../lib/clock.js';
import type { AuditRecord } from '../audit/audit.js';
import { enqueue } from '../outbox/outbox.js';
import type { Store } from '../store.js';
import type { WebhookPayload, WebhookRecord } from './webhook.js';
import { eventsOf } from './webhook-events.js';

/**
 * How long this process trusts its copy of the webhook list. A webhook created or deleted
 * by this process takes effect at once (`invalidate`); by another (the CLI, another
 * instance), within this long. Sign-ins are hot: without the copy each would read the
 * webhooks table even where none exists.
 */
export const WEBHOOK_LIST_TTL_MS = 5000;

/**
 * Turns audit rows into webhook deliveries: for each event a row emits (webhook-events.ts),
 * one outbox row per webhook subscribed to it, written through the same transaction as the
 * audit row, so an event is delivered for a change committed and never for one rolled back.
 */
export class WebhookEmitter {
  #cached: { at: number; webhooks: WebhookRecord[] } | undefined;

  constructor(private readonly clock: Clock) {}

  /** Forgets the copy of the list: the next event reads the table. */
  invalidate(): void {
    this.#cached = undefined;
  }

  /** True when some row may emit an event: worth a transaction of its own (a buffered flush). */
  mayEmit(records: readonly AuditRecord[]): boolean {
    if (this.#cached && this.#cached.webhooks.length === 0 && this.#fresh()) return false;
    return records.some((record) => eventsOf(record).length > 0);
  }

  async emit(tx: Store, records: readonly AuditRecord[]): Promise<void> {
    for (const record of records) {
      const events = eventsOf(record);
      if (events.length === 0) continue;
      const webhooks = await this.#webhooks(tx);
      let username: string | null | undefined;
      for (const event of events) {
        const subscribed = webhooks.filter((webhook) =>
          webhook.events.split(' ').includes(event.type),
        );
        if (subscribed.length === 0) continue;
        // Every event about an identity names it by username too: read in this transaction,
        // only for an event someone receives.
        if (username === undefined && record.target_identity !== null) {
          username = (await tx.findIdentityById(record.target_identity))?.username ?? null;
        }
        let data = record.target_identity === null ? event.data : { ...event.data, username };
        if (event.type === 'session.created') {
          // The assurance the sign-in reached is the session's, not the audit row's.
          const session = await tx.findSessionById(String(event.data.session_id));
          data = { ...data, aal: session?.aal ?? null };
        }
        const payload: WebhookPayload = { type: event.type, timestamp: toIso(record.at), data };
        for (const webhook of subscribed) {
          await enqueue(tx, this.clock, {
            kind: 'webhook',
            target: webhook.id,
            topic: event.type,
            payload,
          });
        }
      }
    }
  }

  #fresh(): boolean {
    const age = this.clock.now() - (this.#cached?.at ?? -Infinity);
    return age >= 0 && age < WEBHOOK_LIST_TTL_MS;
  }

  async #webhooks(tx: Store): Promise<WebhookRecord[]> {
    if (this.#cached && this.#fresh()) return this.#cached.webhooks;
    const webhooks = await tx.listWebhooks();
    this.#cached = { at: this.clock.now(), webhooks };
    return webhooks;
  }
}
