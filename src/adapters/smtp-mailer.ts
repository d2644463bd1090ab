import nodemailer, { type NodemailerError } from 'nodemailer';
import { type FailureKind, DeliveryFailure } from '../domain/outbox/outbox.js';
import type { MailSender, OutgoingMail } from '../domain/mail/message.js';

export interface SmtpSettings {
  /** SERVICE_SMTP_URL: `smtp://` (STARTTLS when offered) or `smtps://`, credentials inside. */
  url: string;
  /** SERVICE_MAIL_FROM. */
  from: string;
  /** Per-step limits; a stuck server must not hold a claim past its lease. */
  timeoutMs?: number;
}

// Errors without an SMTP reply that no retry can mend: the message itself is unsendable.
const UNSENDABLE = new Set(['EENVELOPE', 'EMESSAGE']);

/**
 * RFC 5321: a 5yz reply is a permanent refusal, 4yz a transient one. 503 (bad sequence of
 * commands) speaks of the session, not the message: a new connection may succeed. Without
 * a reply (connection refused, timeout, TLS, DNS) the server may be back soon: temporary.
 */
export function classifySmtpError(error: NodemailerError): FailureKind {
  const reply = error.responseCode;
  if (typeof reply === 'number') return reply >= 500 && reply !== 503 ? 'permanent' : 'temporary';
  return error.code !== undefined && UNSENDABLE.has(error.code) ? 'permanent' : 'temporary';
}

/** Mail over SMTP with nodemailer: a small pool of connections, reused between mails. */
export function smtpMailer(settings: SmtpSettings): MailSender {
  const timeout = settings.timeoutMs ?? 30_000;
  const transport = nodemailer.createTransport({
    url: settings.url,
    pool: true,
    maxConnections: 5,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  return {
    async send(mail: OutgoingMail) {
      try {
        await transport.sendMail({
          from: settings.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId: mail.messageId,
        });
      } catch (error) {
        const smtpError = error as NodemailerError;
        const reply = smtpError.response ? `: ${smtpError.response}` : '';
        throw new DeliveryFailure(
          classifySmtpError(smtpError),
          `${smtpError.code ?? 'SMTP'}${reply || `: ${smtpError.message}`}`,
        );
      }
    },
    async close() {
      transport.close();
    },
  };
}
