import type { Clock } from '../../lib/clock.js';
import { validationError } from '../errors.js';
import { enqueue, type OutboxStore } from '../outbox/outbox.js';
import { isTemplateName, type TemplateName } from './templates.js';

/** A mail to send: which template, for whom, in which language, with what in its blanks. */
export interface MailMessage {
  /** The recipient's address, as the identity holds it. */
  to: string;
  template: TemplateName;
  /** A BCP 47 tag such as `de` or `de-CH`; English where no translation exists. */
  locale?: string;
  /** The template's placeholders; escaped for the HTML part at render time. */
  variables: Record<string, string>;
}

/** The outbox payload of a mail: rendered when sent, so a template fix reaches queued mail. */
export interface MailPayload {
  template: TemplateName;
  locale: string;
  variables: Record<string, string>;
}

// One address, no display name: what an identity's email is. No CR/LF or angle brackets,
// so nothing in it can become a header or a second recipient.
const ADDRESS = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/;

const LOCALE = /^[a-z]{2,3}(?:[-_][a-z0-9]{2,8}){0,3}$/i;

export function isMailAddress(text: string): boolean {
  return text.length <= 254 && ADDRESS.test(text);
}

/**
 * Queues `message` through `tx`, the transaction of the change that causes it (the
 * audit row's pattern): the mail commits with the change, or is never sent.
 */
export async function enqueueMail(
  tx: OutboxStore,
  clock: Clock,
  message: MailMessage,
): Promise<string> {
  if (!isMailAddress(message.to)) throw validationError('not a mail address');
  if (!isTemplateName(message.template)) throw validationError('no such mail template');
  const payload: MailPayload = {
    template: message.template,
    // A tag from a browser's Accept-Language may be anything: one that is not a plain BCP 47
    // tag renders in English rather than refusing the change that sends the mail.
    locale: message.locale !== undefined && LOCALE.test(message.locale) ? message.locale : 'en',
    variables: message.variables,
  };
  return enqueue(tx, clock, { kind: 'mail', target: message.to, topic: message.template, payload });
}

/** A rendered mail, ready for a MailSender. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Stable per outbox row: a mail sent twice (at-least-once) carries the same Message-ID. */
  messageId: string;
}

/** Hands a mail to whatever carries it (SMTP, or the log); throws DeliveryFailure. */
export interface MailSender {
  send(mail: OutgoingMail): Promise<void>;
  close?(): Promise<void>;
}
