import { toIso } from '../../lib/clock.js';
import type { OutboxRecord } from '../outbox/outbox.js';

/**
 * Every event a webhook may subscribe to (docs/webhooks.md has each one's `data`). Names are
 * `noun.verb`; webhook-events.ts says which audited change emits which.
 */
export const WEBHOOK_EVENT_TYPES = [
  'identity.created',
  'identity.updated',
  'identity.disabled',
  'identity.enabled',
  'session.created',
  'session.revoked',
  'sign_in.failed',
  'password.changed',
  'email.verified',
  'second_factor.enabled',
  'second_factor.disabled',
  'passkey.added',
  'passkey.removed',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookRecord {
  id: string;
  url: string;
  /** The subscribed event types, space-separated. */
  events: string;
  /** The signing secret (`whsec_...`), sealed with the encryption key (lib/secret-box.ts). */
  sealed_secret: string;
  created_at: number;
}

/** A webhook as listed: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: WebhookEventType[];
  created_at: string;
}

export function toWebhookView(record: WebhookRecord): WebhookView {
  return {
    id: record.id,
    url: record.url,
    events: record.events.split(' ') as WebhookEventType[],
    created_at: toIso(record.created_at),
  };
}

/** The sealed secret's associated data: a secret sealed for one webhook opens for no other. */
export function secretContext(webhookId: string): string {
  return `webhook:${webhookId}`;
}

/** What an outbox row of kind `webhook` carries: the body posted, as signed. */
export interface WebhookPayload {
  type: WebhookEventType;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface WebhookStore {
  insertWebhook(record: WebhookRecord): Promise<void>;
  /** False when no such webhook. */
  deleteWebhook(id: string): Promise<boolean>;
  findWebhook(id: string): Promise<WebhookRecord | undefined>;
  /** Oldest first. */
  listWebhooks(): Promise<WebhookRecord[]>;
  /** A webhook row's outbox rows (kind `webhook`, `target` its id), newest first. */
  listWebhookDeliveries(limit: number, webhookId?: string): Promise<OutboxRecord[]>;
  /** Puts one webhook delivery back in the queue, due now, whatever its state; false if none. */
  requeueWebhookDelivery(id: string, now: number): Promise<boolean>;
}
