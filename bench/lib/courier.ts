/**
 * The courier's sending rate: mails queued in the outbox before the service starts, a real
 * SMTP server (smtp-server, in this process) accepting them, and the time from the
 * service's readiness until the last one is accepted. The service's CPU per mail covers
 * claiming, rendering, SMTP and marking sent.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { enqueueMail } from '../../src/domain/mail/message.js';
import { systemClock } from '../../src/lib/clock.js';
import { openStorage } from '../../src/storage/open.js';
import type { BenchDatabase } from './databases.js';
import { freePort, startService } from './processes.js';

export interface CourierResult {
  db: string;
  mails: number;
  /** From the service's readiness to the last mail accepted. */
  seconds: number;
  mailsPerSec: number;
  /** The service's CPU (all threads) per mail sent, microseconds. */
  cpuUsPerMail: number;
}

async function queueMails(url: string, count: number): Promise<void> {
  const store = openStorage({ databaseUrl: url, timeoutMs: 30_000, poolSize: 2 });
  try {
    for (let done = 0; done < count; done += 500) {
      await store.transaction(async (tx) => {
        for (let i = done; i < Math.min(count, done + 500); i++) {
          await enqueueMail(tx, systemClock, {
            to: `bench-${i}@example.com`,
            template: 'email_verification',
            variables: { code: String(100000 + (i % 900000)), link: `https://id.example/v/${i}` },
          });
        }
      });
    }
  } finally {
    await store.close();
  }
}

export async function measureCourier(db: BenchDatabase, count = 2_000): Promise<CourierResult> {
  let accepted = 0;
  let allAccepted: () => void = () => {};
  const done = new Promise<void>((resolve) => (allAccepted = resolve));
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        callback();
        if (++accepted === count) allAccepted();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  await queueMails(db.url, count);
  const port = await freePort();
  const service = await startService({
    port,
    env: {
      ...db.env,
      SERVICE_PORT: String(port),
      SERVICE_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      SERVICE_MAIL_FROM: 'Bench <bench@example.com>',
    },
  });
  try {
    // The worker starts with the service: what it sent before readiness is left out.
    const started = performance.now();
    const cpuBefore = service.cpuSeconds();
    const sentBefore = accepted;
    await done;
    const seconds = (performance.now() - started) / 1000;
    const measured = count - sentBefore;
    return {
      db: db.label,
      mails: measured,
      seconds,
      mailsPerSec: measured / seconds,
      cpuUsPerMail: ((service.cpuSeconds() - cpuBefore) * 1e6) / measured,
    };
  } finally {
    await service.stop();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  }
}
