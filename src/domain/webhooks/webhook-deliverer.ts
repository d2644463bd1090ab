import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { type Deliverer, DeliveryFailure, type OutboxRecord } from '../outbox/outbox.js';
import { secretContext, type WebhookStore } from './webhook.js';
import { AddressRefused, type WebhookTransport } from './webhook-transport.js';

/**
 * The outbox's `webhook` kind, by the Standard Webhooks specification: the row's body,
 * signed with the webhook's secret at each attempt (by the transport) (`webhook-timestamp` is the attempt's,
 * so receivers' replay windows hold), under `webhook-id` = the row's id, the same on every
 * attempt: a receiver de-duplicates by it (at-least-once).
 *
 * Any 2xx answer delivers. Any other answer, a timeout or a refused connection is retried
 * (retry-policy.ts: about 5 s, 30 s, then growing waits for 24 h), as the specification
 * recommends; a redirect is not followed but retried like any non-2xx. Permanent at once: a
 * webhook deleted meanwhile, a secret no key opens, an address refused as private.
 */
export function webhookDeliverer(deps: {
  store: WebhookStore;
  secretBox: SecretBox;
  transport: WebhookTransport;
  clock: Clock;
}): Deliverer {
  return {
    async deliver(record: OutboxRecord) {
      const webhook = await deps.store.findWebhook(record.target);
      if (!webhook) throw new DeliveryFailure('permanent', 'the webhook was deleted');
      const secret = deps.secretBox.open(webhook.sealed_secret, secretContext(webhook.id));
      if (secret === null) {
        throw new DeliveryFailure('permanent', 'no configured encryption key opens the secret');
      }
      const message = {
        id: record.id,
        at: new Date(deps.clock.now()),
        body: record.payload,
        secret,
      };
      let status: number;
      try {
        status = await deps.transport.post(webhook.url, message);
      } catch (error) {
        if (error instanceof AddressRefused) throw new DeliveryFailure('permanent', error.message);
        throw error;
      }
      if (status < 200 || status > 299) {
        throw new DeliveryFailure('temporary', `the receiver answered ${status}`);
      }
    },
  };
}
