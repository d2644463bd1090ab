import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { isUuid, newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { notFound, validationError } from '../errors.js';
import { requireListLimit } from '../list-limit.js';
import { toOutboxEntry, type OutboxEntry } from '../outbox/outbox-admin.js';
import type { Store } from '../store.js';
import {
  secretContext,
  toWebhookView,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type WebhookView,
} from './webhook.js';
import type { WebhookEmitter } from './webhook-emitter.js';
import { AddressRefused, type WebhookTransport } from './webhook-transport.js';

export interface WebhookDeps {
  store: Store;
  clock: Clock;
  audit: AuditLog;
  secretBox: SecretBox;
  webhooks: { emitter: WebhookEmitter; transport: WebhookTransport };
}

/** The longest URL kept: longer is no receiver's, and would bloat every delivery row. */
const MAX_URL_LENGTH = 2000;

function requireEvents(events: readonly string[]): WebhookEventType[] {
  const unique = [...new Set(events.map((event) => event.trim()).filter(Boolean))];
  if (unique.length === 0) throw validationError('events must name at least one event');
  const unknown = unique.filter(
    (event) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event),
  );
  if (unknown.length > 0) {
    throw validationError(
      `unknown event ${unknown.join(', ')}: one of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    );
  }
  return unique as WebhookEventType[];
}

/** The Standard Webhooks secret format: `whsec_` and base64 of 32 random bytes. */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `tessera webhook create`, the console's form: the secret is in the answer, and only there. */
export async function createWebhook(
  deps: WebhookDeps,
  actor: Actor,
  input: { url: string; events: readonly string[] },
): Promise<{ webhook: WebhookView; secret: string }> {
  const events = requireEvents(input.events);
  if (input.url.length > MAX_URL_LENGTH) {
    throw validationError(`url must be at most ${MAX_URL_LENGTH} characters`);
  }
  try {
    await deps.webhooks.transport.check(input.url);
  } catch (error) {
    if (error instanceof AddressRefused) throw validationError(`url: ${error.message}`);
    throw error;
  }
  const id = newId();
  const secret = newSecret();
  const record = {
    id,
    url: input.url,
    events: events.join(' '),
    sealed_secret: deps.secretBox.seal(secret, secretContext(id)),
    created_at: deps.clock.now(),
  };
  await deps.store.transaction(async (tx) => {
    await tx.insertWebhook(record);
    await deps.audit.write(tx, actor, {
      action: 'webhook_create',
      details: { webhook_id: id, url: record.url, events },
    });
  });
  deps.webhooks.emitter.invalidate();
  return { webhook: toWebhookView(record), secret };
}

export async function listWebhooks(store: Store): Promise<WebhookView[]> {
  return (await store.listWebhooks()).map(toWebhookView);
}

/** Deletes the webhook; its deliveries still queued then fail as deleted, never sent. */
export async function deleteWebhook(
  deps: WebhookDeps,
  actor: Actor,
  id: string,
): Promise<WebhookView> {
  if (!isUuid(id)) throw notFound();
  const view = await deps.store.transaction(async (tx) => {
    const record = await tx.findWebhook(id);
    if (!record || !(await tx.deleteWebhook(id))) throw notFound();
    await deps.audit.write(tx, actor, {
      action: 'webhook_delete',
      details: { webhook_id: id, url: record.url },
    });
    return toWebhookView(record);
  });
  deps.webhooks.emitter.invalidate();
  return view;
}

/** The delivery log, newest first: one webhook's, or every webhook's. Never the body. */
export async function listDeliveries(
  store: Store,
  options: { webhookId?: string; limit?: number },
): Promise<OutboxEntry[]> {
  const limit = requireListLimit(options.limit);
  if (options.webhookId !== undefined && !isUuid(options.webhookId)) throw notFound();
  return (await store.listWebhookDeliveries(limit, options.webhookId)).map(toOutboxEntry);
}

/**
 * "Send again": a failed delivery back in the queue, due now (a pending one waiting for
 * its retry is brought forward). Same row, same `webhook-id`. Audited.
 */
export async function resendDelivery(deps: WebhookDeps, actor: Actor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound();
  await deps.store.transaction(async (tx) => {
    const record = await tx.findOutboxRecord(id);
    if (!record || record.kind !== 'webhook') throw notFound();
    if (!(await tx.requeueWebhookDelivery(id, deps.clock.now()))) {
      throw validationError(
        `delivery ${id} is ${record.state}: only a failed or waiting one is sent again`,
      );
    }
    await deps.audit.write(tx, actor, {
      action: 'webhook_resend',
      details: { delivery_id: id, webhook_id: record.target },
    });
  });
}
