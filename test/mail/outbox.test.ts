import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { AuditLog } from '../../src/domain/audit/audit-log.js';
import { enqueueMail } from '../../src/domain/mail/message.js';
import { OutboxCounters, type OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { listMail, retryMail } from '../../src/domain/outbox/outbox-admin.js';
import { MAX_AGE_MS, RETRY_DELAYS_MS } from '../../src/domain/outbox/retry-policy.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { FakeClock } from '../helpers/clock.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type TestDatabase,
} from '../helpers/databases.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const FROM = 'Tessera <no-reply@example.com>';

describeEachDatabase('mail outbox', (kind) => {
  let db: TestDatabase;
  let store: StoreHandle;
  let smtp: TestSmtp;
  let clock: FakeClock;
  let counters: OutboxCounters;
  let worker: OutboxWorker;

  beforeEach(async () => {
    db = await createTestDatabase(kind);
    store = db.open();
    await store.migrate();
    smtp = await startTestSmtp();
    clock = new FakeClock();
    counters = new OutboxCounters();
    worker = buildCourier(
      { smtpUrl: smtp.url, from: FROM, templatesDir: null },
      { store, clock, counters, log: quiet },
    );
  });

  afterEach(async () => {
    await worker.stop();
    await smtp.stop();
    await store.close();
    await db.drop();
  });

  const queue = (to: string, variables: Record<string, string> = { code: '123456' }) =>
    store.transaction((tx) =>
      enqueueMail(tx, clock, { to, template: 'sign_in_code', locale: 'de', variables }),
    );

  it('sends a committed mail over SMTP, rendered, once, and lists it as sent', async () => {
    const id = await queue('ada@example.com', { code: '<b>"&</b>' });
    await worker.drain();

    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0]!;
    expect(mail.to).toMatchObject({ text: 'ada@example.com' });
    expect(mail.from).toMatchObject({ text: '"Tessera" <no-reply@example.com>' });
    expect(mail.subject).toBe('Ihr Anmeldecode: <b>"&</b>');
    expect(mail.text).toContain('Ihr Code zur Anmeldung lautet <b>"&</b>.');
    expect(mail.html).toContain('&lt;b&gt;&quot;&amp;&lt;/b&gt;');
    expect(mail.html).not.toContain('<b>"&</b>');
    expect(mail.messageId).toBe(`<${id}@example.com>`);

    const [entry] = await listMail(store, {});
    expect(entry).toMatchObject({ id, state: 'sent', attempts: 1, to: 'ada@example.com' });
    // Sent: the codes are gone from the database.
    expect((await store.findOutboxRecord(id))!.payload).toBe('{}');
    expect(counters.sent.get('mail')).toBe(1);
    await worker.drain();
    expect(smtp.received).toHaveLength(1);
  });

  it('deletes sent mail once it is a week old; failed mail stays', async () => {
    smtp.answer = (mail) =>
      mail.to && 'text' in mail.to && mail.to.text.startsWith('gone')
        ? { code: 550, message: 'no such user' }
        : 'accept';
    const sent = await queue('ada@example.com');
    const failed = await queue('gone@example.com');
    await worker.drain();
    clock.advance(7 * 24 * 60 * 60_000 + 60 * 60_000);
    await worker.runOnce();
    expect(await store.findOutboxRecord(sent)).toBeUndefined();
    expect(await store.findOutboxRecord(failed)).toMatchObject({ state: 'failed' });
  });

  it('leaves no mail behind when the change that queued it rolls back', async () => {
    const failure = new Error('the change fails after queueing its mail');
    await expect(
      store.transaction(async (tx) => {
        await enqueueMail(tx, clock, {
          to: 'ada@example.com',
          template: 'password_changed',
          variables: { username: 'ada' },
        });
        throw failure;
      }),
    ).rejects.toBe(failure);

    expect(await listMail(store, {})).toEqual([]);
    await worker.drain();
    expect(smtp.received).toHaveLength(0);
  });

  it('stops at a permanent refusal (5xx); `retry` queues it again, audited', async () => {
    smtp.answer = () => ({ code: 550, message: 'mailbox unavailable' });
    const id = await queue('gone@example.com');
    await worker.drain();
    clock.advance(MAX_AGE_MS.mail);
    await worker.drain();

    expect(await listMail(store, { state: 'failed' })).toMatchObject([
      { id, state: 'failed', attempts: 1, last_error: expect.stringContaining('550') },
    ]);
    expect(counters.failed.get('mail')).toBe(1);
    expect(await store.countOutboxRecords()).toEqual({ pending: 0, sent: 0, failed: 1 });

    smtp.answer = () => 'accept';
    const audit = new AuditLog(store, clock, 1000, () => undefined);
    const actor = { service_name: 'cli', service_id: null };
    expect(await retryMail({ store, clock, audit }, actor, { failed: true })).toEqual([id]);
    await worker.drain();
    expect(smtp.received).toHaveLength(1);
    expect(await store.listAuditRecords(10, { actions: ['mail_retry'] })).toMatchObject([
      { action: 'mail_retry', details: JSON.stringify({ ids: [id] }) },
    ]);
  });

  it('delivers every mail once the SMTP server is back after a minute down', async () => {
    for (let i = 0; i < 20; i++) await queue(`user${i}@example.com`);
    await smtp.stop();

    // A minute of a refused server, on the injected clock: each attempt is scheduled later.
    let waited = 0;
    for (const delay of RETRY_DELAYS_MS) {
      if (waited >= 60_000) break;
      await worker.drain();
      expect(smtp.received).toHaveLength(0);
      clock.advance(delay);
      waited += delay;
    }
    const [pending] = await listMail(store, { state: 'pending' });
    expect(pending!.last_error).toMatch(/ECONNECTION|ESOCKET|ECONNREFUSED/);
    expect(counters.retried.get('mail')).toBeGreaterThanOrEqual(20);

    await smtp.restart();
    clock.advance(RETRY_DELAYS_MS.at(-1)!);
    await worker.drain();
    expect(
      new Set(smtp.received.map((mail) => mail.to && 'text' in mail.to && mail.to.text)).size,
    ).toBe(20);
    expect(smtp.received).toHaveLength(20);
    expect(await store.countOutboxRecords()).toMatchObject({ pending: 0, sent: 20, failed: 0 });
  });

  it('gives up on a temporary failure once the mail is older than its maximum age', async () => {
    smtp.answer = () => ({ code: 451, message: 'try again later' });
    const id = await queue('slow@example.com');
    await worker.drain();
    expect((await store.findOutboxRecord(id))!.state).toBe('pending');
    clock.advance(MAX_AGE_MS.mail);
    await worker.drain();
    expect(await store.findOutboxRecord(id)).toMatchObject({
      state: 'failed',
      attempts: 2,
      last_error: expect.stringContaining('451'),
    });
  });

  it('takes a crashed worker’s claim again once its lease has run out', async () => {
    await queue('ada@example.com');
    // A claim whose worker never settles it: the process died mid-send.
    const [claimed] = await store.claimOutboxRecords({
      now: clock.now(),
      leaseMs: 60_000,
      limit: 10,
      kinds: ['mail'],
      token: 'dead-worker',
    });
    await worker.drain();
    expect(smtp.received).toHaveLength(0);
    clock.advance(60_000);
    await worker.drain();
    expect(smtp.received).toHaveLength(1);
    // The dead worker's late word no longer counts.
    expect(await store.settleOutboxRecord(claimed!.id, 'dead-worker', { state: 'sent' }, 0)).toBe(
      false,
    );
  });
});

it('refuses to queue a mail to something that is not one address', async () => {
  const db = await createTestDatabase('sqlite');
  const store = db.open();
  await store.migrate();
  try {
    for (const to of ['a@b.c\r\nBcc: x@y.z', 'a@b.c, d@e.f', 'Ada <a@b.c>', 'nobody']) {
      await expect(
        enqueueMail(store, new FakeClock(), { to, template: 'sign_in_code', variables: {} }),
      ).rejects.toMatchObject({ code: 'validation_error' });
    }
    // A malformed language (from a browser, say) is no reason to refuse: English it is.
    const id = await enqueueMail(store, new FakeClock(), {
      to: 'ada@example.com',
      template: 'sign_in_code',
      locale: '../de',
      variables: { code: '1' },
    });
    expect(JSON.parse((await store.findOutboxRecord(id))!.payload)).toMatchObject({ locale: 'en' });
  } finally {
    await store.close();
    await db.drop();
  }
});
