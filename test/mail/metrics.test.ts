import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { enqueueMail } from '../../src/domain/mail/message.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describeEachDatabase('outbox on /metrics', (kind) => {
  let app: TestApp;
  let smtp: TestSmtp;
  beforeEach(async () => {
    app = await createTestApp(kind);
    smtp = await startTestSmtp();
  });
  afterEach(async () => {
    await smtp.stop();
    await app.close();
  });

  const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;

  it('shows pending and failed rows of the shared queue, and what this worker did', async () => {
    for (const to of ['ok@example.com', 'gone@example.com', 'later@example.com']) {
      await app.deps.store.transaction((tx) =>
        enqueueMail(tx, app.clock, { to, template: 'sign_in_code', variables: { code: '1' } }),
      );
    }
    expect(await scrape()).toContain('tessera_outbox_pending 3\n');

    smtp.answer = (mail) => {
      const to = mail.to && 'text' in mail.to ? mail.to.text : '';
      if (to.startsWith('gone')) return { code: 550, message: 'no such user' };
      if (to.startsWith('later')) return { code: 421, message: 'busy' };
      return 'accept';
    };
    const worker = buildCourier(
      { smtpUrl: smtp.url, from: 'no-reply@example.com', templatesDir: null },
      { store: app.deps.store, clock: app.clock, counters: app.deps.outboxCounters, log: quiet },
    );
    await worker.drain();
    await worker.stop();

    const text = await scrape();
    expect(text).toContain('tessera_outbox_pending 1\n');
    expect(text).toContain('tessera_outbox_failed 1\n');
    expect(text).toContain('tessera_outbox_sent_total{kind="mail"} 1\n');
    expect(text).toContain('tessera_outbox_failed_total{kind="mail"} 1\n');
    expect(text).toContain('tessera_outbox_retried_total{kind="mail"} 1\n');
  });
});
