import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { enqueueMail } from '../../src/domain/mail/message.js';
import { OutboxCounters } from '../../src/domain/outbox/outbox-worker.js';
import { systemClock } from '../../src/lib/clock.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const MAILS = 1000;

describeOnPostgres('mail outbox, two instances', () => {
  let db: TestDatabase;
  let stores: StoreHandle[];
  let smtp: TestSmtp;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    // Two instances: each its own pool of connections to the one schema.
    stores = [db.open(), db.open()];
    await stores[0]!.migrate();
    smtp = await startTestSmtp();
  });

  afterAll(async () => {
    await smtp.stop();
    for (const store of stores) await store.close();
    await db.drop();
  });

  it('delivers each of 1,000 queued mails exactly once', async () => {
    const ids = await stores[0]!.transaction(async (tx) => {
      const queued: string[] = [];
      for (let i = 0; i < MAILS; i++) {
        queued.push(
          await enqueueMail(tx, systemClock, {
            to: `user${i}@example.com`,
            template: 'verification_code',
            variables: { code: String(i) },
          }),
        );
      }
      return queued;
    });

    const counters = stores.map(() => new OutboxCounters());
    const workers = stores.map((store, i) =>
      buildCourier(
        { smtpUrl: smtp.url, from: 'no-reply@example.com', templatesDir: null },
        { store, clock: systemClock, counters: counters[i]!, log: quiet },
      ),
    );
    await Promise.all(workers.map((worker) => worker.drain()));
    await Promise.all(workers.map((worker) => worker.stop()));

    const delivered = smtp.received.map((mail) => mail.messageId);
    expect(delivered).toHaveLength(MAILS);
    expect(new Set(delivered)).toEqual(new Set(ids.map((id) => `<${id}@example.com>`)));
    // Both instances sent: the claims interleaved rather than one instance doing it all.
    // Both instances sent: the claims interleaved rather than one instance doing it all.
    const [first, second] = counters.map((counted) => counted.sent.get('mail') ?? 0);
    expect(first! + second!).toBe(MAILS);
    expect(Math.min(first!, second!)).toBeGreaterThan(0);
    expect(await stores[1]!.countOutboxRecords()).toEqual({ pending: 0, sent: MAILS, failed: 0 });
  });
});
