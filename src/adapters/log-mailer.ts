import type { MailSender, OutgoingMail } from '../domain/mail/message.js';

export interface MailLog {
  info(fields: object, message: string): void;
}

/**
 * Without SERVICE_SMTP_URL: each mail is written to the log (its text part, codes
 * included) instead of sent, so the quick start's mail can be read off the terminal.
 * Never for production: serve warns at start-up (docs/mail.md).
 */
export function logMailer(log: MailLog, from: string): MailSender {
  return {
    async send(mail: OutgoingMail) {
      log.info(
        {
          mail: {
            from,
            to: mail.to,
            subject: mail.subject,
            message_id: mail.messageId,
            text: mail.text,
          },
        },
        'mail written to the log (SERVICE_SMTP_URL is unset)',
      );
    },
  };
}
