import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** What the test SMTP server does with the next DATA: accept, refuse, or hold it unanswered. */
export type SmtpAnswer = 'accept' | { code: number; message: string } | 'hold';

/** A real SMTP server on localhost (smtp-server), each accepted mail parsed with mailparser. */
export interface TestSmtp {
  port: number;
  url: string;
  /** Mails accepted so far, in order of acceptance. */
  readonly received: ParsedMail[];
  /** Mails whose DATA arrived but is held unanswered ('hold'). */
  readonly held: number;
  /** Decides the answer to each DATA; 'accept' unless set. */
  answer: (raw: ParsedMail) => SmtpAnswer;
  /** Resolves once `count` mails have been accepted, or `held` held (no deadline: the test's). */
  waitFor(count: number, which?: 'received' | 'held'): Promise<void>;
  /** Accepts every held mail now. */
  release(): void;
  /** Stops listening (connections are refused) and drops open ones. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const received: ParsedMail[] = [];
  let held = 0;
  const holding: { mail: ParsedMail; accept: () => void }[] = [];
  const waiters: { which: 'received' | 'held'; count: number; resolve: () => void }[] = [];
  const notify = () => {
    for (const waiter of [...waiters]) {
      const have = waiter.which === 'received' ? received.length : held;
      if (have >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  let server: SMTPServer;
  const smtp: TestSmtp = {
    port: 0,
    url: '',
    received,
    get held() {
      return held;
    },
    answer: () => 'accept',
    release() {
      for (const { mail, accept } of holding.splice(0)) {
        received.push(mail);
        accept();
      }
      notify();
    },
    waitFor(count, which = 'received') {
      return new Promise((resolve) => {
        waiters.push({ which, count, resolve });
        notify();
      });
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
    restart: () => listen(smtp.port),
  };
  const listen = (port: number) => {
    server = new SMTPServer({
      authOptional: true,
      // Plain SMTP: nodemailer upgrades to TLS whenever the server offers STARTTLS.
      disabledCommands: ['STARTTLS'],
      logger: false,
      // Open pooled connections are cut at once on stop(), as a crashed server's would be.
      closeTimeout: 1,
      onData(stream, _session, callback) {
        simpleParser(stream).then((mail) => {
          const answer = smtp.answer(mail);
          if (answer === 'hold') {
            holding.push({ mail, accept: () => callback() });
            held += 1;
            notify();
            return;
          }
          if (answer === 'accept') {
            received.push(mail);
            notify();
            return callback();
          }
          callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
        }, callback);
      },
    });
    // A client killed in the middle of a mail (the kill -9 tests) resets its connection, and
    // smtp-server reports a reset inside a transaction as the server's 'error'. That is the
    // expected end of such a test, not a failure of this server: without a listener it would
    // be an uncaught exception in whichever test runs then.
    server.on('error', () => undefined);
    return new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        smtp.port = (server.server.address() as AddressInfo).port;
        smtp.url = `smtp://127.0.0.1:${smtp.port}`;
        resolve();
      });
    });
  };
  await listen(0);
  return smtp;
}
