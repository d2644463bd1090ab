import { afterEach, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { AuditLog } from '../../src/domain/audit/audit-log.js';
import { DEFAULT_LEASE_MS, OutboxCounters } from '../../src/domain/outbox/outbox-worker.js';
import { httpWebhookTransport } from '../../src/adapters/webhook-http.js';
import { WebhookEmitter } from '../../src/domain/webhooks/webhook-emitter.js';
import { createSecretBox } from '../../src/lib/secret-box.js';
import { systemClock, type Clock } from '../../src/lib/clock.js';
import { openStorage } from '../../src/storage/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { cliJson, cliSandbox, type CliSandbox } from '../helpers/cli.js';
import { FakeClock } from '../helpers/clock.js';
import { createTestDatabase, describeOnPostgres } from '../helpers/databases.js';
import { type LoggingServe, startServe } from '../helpers/serve.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

let sandbox: CliSandbox | undefined;
let serve: LoggingServe | undefined;
let receiver: WebhookReceiver | undefined;

afterEach(async () => {
  if (serve && serve.child.exitCode === null && serve.child.signalCode === null) await serve.stop();
  serve = undefined;
  await receiver?.stop();
  receiver = undefined;
  sandbox?.remove();
  sandbox = undefined;
});

/** `count` identity.created events, emitted as any change emits them: through the audit trail. */
async function emit(store: StoreHandle, clock: Clock, count: number): Promise<string[]> {
  const audit = new AuditLog(store, clock, 1000, () => undefined);
  audit.follow(new WebhookEmitter(clock));
  await store.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      await audit.write(
        tx,
        { service_name: 'test', service_id: null },
        { action: 'identity_register', target_identity: null },
      );
    }
  });
  return (await store.listWebhookDeliveries(10_000)).map((delivery) => delivery.id);
}

it('loses nothing when a serve is killed with kill -9 in the middle of deliveries', async () => {
  sandbox = cliSandbox();
  const env: Record<string, string> = { ...sandbox.env, SERVICE_WEBHOOK_ALLOW_PRIVATE: 'on' };
  receiver = await WebhookReceiver.start();
  const created = await cliJson<{ secret: string; webhook: { id: string } }>(
    ['webhook', 'create', '--url', receiver.url, '--events', 'identity.created'],
    env,
  );
  receiver.secret = created.secret;
  const store = openStorage({ databaseUrl: sandbox.databaseFile, timeoutMs: 5000, poolSize: 1 });
  try {
    const ids = await emit(store, systemClock, 30);
    // The first deliveries reach the receiver and are never answered: a batch is in flight.
    receiver.answer = () => 'hold';
    serve = await startServe(env);
    await receiver.waitForHeld(1);
    serve.child.kill('SIGKILL');
    await serve.exited;

    // The dead instance's claim holds its rows until its lease ends; then another sends them.
    receiver.answer = () => 200;
    const worker = buildCourier(
      { smtpUrl: null, from: 'Tessera <t@example.com>', templatesDir: null },
      {
        store,
        clock: new FakeClock(Date.now() + DEFAULT_LEASE_MS),
        counters: new OutboxCounters(),
        log: quiet,
        webhooks: {
          store,
          secretBox: createSecretBox(env.SERVICE_ENCRYPTION_KEY!),
          transport: httpWebhookTransport(true),
          clock: systemClock,
        },
      },
    );
    await worker.drain();
    await worker.stop();

    expect(receiver.unverified).toBe(0);
    expect(new Set(receiver.received.map((webhook) => webhook.id))).toEqual(new Set(ids));
    expect(await store.countOutboxRecords()).toEqual({ pending: 0, sent: 30, failed: 0 });
  } finally {
    await store.close();
  }
});

describeOnPostgres('webhooks, two instances', () => {
  it('deliver each of 300 events exactly once', async () => {
    const db = await createTestDatabase('postgres');
    const stores = [db.open(), db.open()];
    receiver = await WebhookReceiver.start();
    try {
      await stores[0]!.migrate();
      const secretBox = createSecretBox('two-instances-key');
      const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
      receiver.secret = secret;
      const webhookId = '00000000-0000-4000-8000-000000000001';
      await stores[0]!.insertWebhook({
        id: webhookId,
        url: receiver.url,
        events: 'identity.created',
        sealed_secret: secretBox.seal(secret, `webhook:${webhookId}`),
        created_at: Date.now(),
      });
      const ids = await emit(stores[0]!, systemClock, 300);
      const counters = stores.map(() => new OutboxCounters());
      const workers = stores.map((store, i) =>
        buildCourier(
          { smtpUrl: null, from: 'Tessera <t@example.com>', templatesDir: null },
          {
            store,
            clock: systemClock,
            counters: counters[i]!,
            log: quiet,
            webhooks: {
              store,
              secretBox,
              transport: httpWebhookTransport(true),
              clock: systemClock,
            },
          },
        ),
      );
      await Promise.all(workers.map((worker) => worker.drain()));
      await Promise.all(workers.map((worker) => worker.stop()));

      expect(receiver.unverified).toBe(0);
      const delivered = receiver.received.map((webhook) => webhook.id);
      expect(delivered).toHaveLength(300);
      expect(new Set(delivered)).toEqual(new Set(ids));
      const [first, second] = counters.map((counted) => counted.sent.get('webhook') ?? 0);
      expect(Math.min(first!, second!)).toBeGreaterThan(0);
    } finally {
      for (const store of stores) await store.close();
      await db.drop();
    }
  });
});
