import { logMailer } from './adapters/log-mailer.js';
import { readTemplateDir } from './adapters/mail-template-dir.js';
import { smtpMailer } from './adapters/smtp-mailer.js';
import type { MailConfig } from './config.js';
import { mailDeliverer } from './domain/mail/mail-deliverer.js';
import { MailRenderer } from './domain/mail/render.js';
import { webhookDeliverer } from './domain/webhooks/webhook-deliverer.js';
import {
  OutboxWorker,
  type OutboxCounters,
  type OutboxWorkerOptions,
  type WorkerLog,
} from './domain/outbox/outbox-worker.js';
import type { OutboxStore } from './domain/outbox/outbox.js';
import type { Clock } from './lib/clock.js';

export const LOG_MAILER_WARNING =
  'SERVICE_SMTP_URL is unset: mail is written to the log, not sent (docs/mail.md says what production needs)';

export interface CourierParts {
  store: OutboxStore;
  clock: Clock;
  counters: OutboxCounters;
  log: WorkerLog;
  /** Present: webhooks are delivered too (serve.ts); absent, only mail (tests of mail). */
  webhooks?: Parameters<typeof webhookDeliverer>[0];
}

/**
 * The outbox worker of `tessera serve`, wired from the configuration: mail over SMTP when
 * SERVICE_SMTP_URL is set, else to the log. Reads SERVICE_MAIL_TEMPLATES_DIR now, so a bad
 * template file stops the start, not a mail hours later.
 */
export function buildCourier(
  mail: MailConfig,
  parts: CourierParts,
  tuning: Pick<OutboxWorkerOptions, 'batchSize' | 'leaseMs' | 'pollMs'> = {},
): OutboxWorker {
  const renderer = new MailRenderer(mail.templatesDir ? readTemplateDir(mail.templatesDir) : {});
  const sender = mail.smtpUrl
    ? smtpMailer({ url: mail.smtpUrl, from: mail.from })
    : logMailer(parts.log, mail.from);
  const domain = /@([^\s<>@]+)>?$/.exec(mail.from)?.[1] ?? 'localhost';
  return new OutboxWorker({
    ...parts,
    ...tuning,
    deliverers: {
      mail: mailDeliverer(renderer, sender, domain),
      ...(parts.webhooks ? { webhook: webhookDeliverer(parts.webhooks) } : {}),
    },
  });
}
