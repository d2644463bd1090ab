import { type Deliverer, DeliveryFailure, type OutboxRecord } from '../outbox/outbox.js';
import type { MailPayload, MailSender } from './message.js';
import { type MailRenderer, RenderError } from './render.js';

/**
 * The outbox's `mail` kind: renders the row's template in its language at send time and
 * hands the mail to the sender. Its Message-ID derives from the row, so a mail sent twice
 * after a crash (at-least-once) is recognisably the same mail.
 */
export function mailDeliverer(
  renderer: MailRenderer,
  sender: MailSender,
  messageIdDomain: string,
): Deliverer {
  return {
    async deliver(record: OutboxRecord) {
      const payload = JSON.parse(record.payload) as MailPayload;
      let rendered;
      try {
        rendered = renderer.render(payload.template, payload.locale, payload.variables);
      } catch (error) {
        if (error instanceof RenderError) throw new DeliveryFailure('permanent', error.message);
        throw error;
      }
      await sender.send({
        to: record.target,
        ...rendered,
        messageId: `<${record.id}@${messageIdDomain}>`,
      });
    },
    close: () => sender.close?.() ?? Promise.resolve(),
  };
}
