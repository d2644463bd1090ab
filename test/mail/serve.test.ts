import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { enqueueMail } from '../../src/domain/mail/message.js';
import { DEFAULT_LEASE_MS, OutboxCounters } from '../../src/domain/outbox/outbox-worker.js';
import { systemClock } from '../../src/lib/clock.js';
import { openStorage } from '../../src/storage/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { cliSandbox, type CliSandbox } from '../helpers/cli.js';
import { FakeClock } from '../helpers/clock.js';
import { type LoggingServe, runServe, startServe } from '../helpers/serve.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const FROM = 'no-reply@example.com';

let sandbox: CliSandbox;
let store: StoreHandle;
let serve: LoggingServe | undefined;
let smtp: TestSmtp | undefined;

async function setUp(): Promise<void> {
  sandbox = cliSandbox();
  store = openStorage({ databaseUrl: sandbox.databaseFile, timeoutMs: 5000, poolSize: 1 });
  await store.migrate();
}

afterEach(async () => {
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) await serve.stop();
  serve = undefined;
  await smtp?.stop();
  smtp = undefined;
  await store.close();
  sandbox.remove();
});

function queue(count: number): Promise<string[]> {
  return store.transaction(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(
        await enqueueMail(tx, systemClock, {
          to: `user${i}@example.com`,
          template: 'sign_in_code',
          variables: { code: `code-${i}` },
        }),
      );
    }
    return ids;
  });
}

it('without SERVICE_SMTP_URL, serve warns at start-up and writes each mail to the log', async () => {
  await setUp();
  serve = await startServe(sandbox.env);
  const warning = await serve.line(
    'SERVICE_SMTP_URL is unset: mail is written to the log, not sent (docs/mail.md says what production needs)',
  );
  expect(warning.level).toBe(40);

  await queue(1);
  const logged = await serve.line('mail written to the log (SERVICE_SMTP_URL is unset)');
  expect(logged.mail).toMatchObject({
    to: 'user0@example.com',
    subject: 'Your sign-in code: code-0',
    text: expect.stringContaining('code-0'),
  });
});

it('loses nothing when a serve is killed with kill -9 in the middle of a batch', async () => {
  await setUp();
  smtp = await startTestSmtp();
  // The first mails reach the server and are never answered: the batch is in flight.
  smtp.answer = () => 'hold';
  const ids = await queue(30);
  serve = await startServe({ ...sandbox.env, SERVICE_SMTP_URL: smtp.url, SERVICE_MAIL_FROM: FROM });
  await smtp.waitFor(1, 'held');
  serve.child.kill('SIGKILL');
  await serve.exited;

  // The dead instance's claim holds its rows until its lease ends; then another sends them.
  smtp.answer = () => 'accept';
  const clock = new FakeClock(Date.now() + DEFAULT_LEASE_MS);
  const worker = buildCourier(
    { smtpUrl: smtp.url, from: FROM, templatesDir: null },
    { store, clock, counters: new OutboxCounters(), log: quiet },
  );
  await worker.drain();
  await worker.stop();

  const delivered = new Set(smtp.received.map((mail) => mail.messageId));
  expect(delivered).toEqual(new Set(ids.map((id) => `<${id}@example.com>`)));
  expect(await store.countOutboxRecords()).toEqual({ pending: 0, sent: 30, failed: 0 });
  // The killed instance had claimed a batch: its rows were attempted twice.
  const attempts = (await store.listOutboxRecords(100)).map((record) => record.attempts);
  expect(attempts.filter((count) => count === 2).length).toBeGreaterThan(0);
});

it('on SIGTERM, finishes and records the send in flight before the database closes', async () => {
  await setUp();
  smtp = await startTestSmtp();
  smtp.answer = () => 'hold';
  const [id] = await queue(1);
  serve = await startServe({
    ...sandbox.env,
    SERVICE_SMTP_URL: smtp.url,
    SERVICE_MAIL_FROM: FROM,
    // The drain's bound, long enough that only the release below ends the send.
    SERVICE_SHUTDOWN_TIMEOUT_MS: '600000',
  });
  await smtp.waitFor(1, 'held');
  serve.child.kill('SIGTERM');
  await serve.line('shutting down');
  smtp.release();

  expect(await serve.exited).toBe(0);
  expect(smtp.received.map((mail) => mail.messageId)).toEqual([`<${id}@example.com>`]);
  expect(await store.findOutboxRecord(id!)).toMatchObject({ state: 'sent', attempts: 1 });
});

it('a template file it would never use stops serve at start-up, naming the setting', async () => {
  await setUp();
  const dir = join(sandbox.dir, 'templates');
  mkdirSync(dir);
  writeFileSync(join(dir, 'sign_in_code.de.text'), 'Ihr Code: {{code}}');
  const run = runServe({
    ...sandbox.env,
    SERVICE_PORT: '0',
    SERVICE_LOG_LEVEL: 'info',
    SERVICE_MAIL_TEMPLATES_DIR: dir,
  });
  // A setting it cannot use: one line on standard error, exit 2 (docs/operations.md).
  expect(await run.exited).toBe(2);
  expect(run.stderr().trim()).toBe(
    `tessera: validation_error: SERVICE_MAIL_TEMPLATES_DIR=${JSON.stringify(dir)} cannot be used: it holds sign_in_code.de.text; expected <template>.<locale>.subject.txt, .txt or .html of a known template`,
  );
});
