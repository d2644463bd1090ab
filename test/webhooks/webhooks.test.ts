import { afterEach, beforeEach, expect, it } from 'vitest';
import { httpWebhookTransport } from '../../src/adapters/webhook-http.js';
import { buildCourier } from '../../src/courier.js';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { OutboxCounters, type OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { RETRY_DELAYS_MS } from '../../src/domain/outbox/retry-policy.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks/webhook.js';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  resendDelivery,
} from '../../src/domain/webhooks/webhook-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { FakeClock } from '../helpers/clock.js';
import { PASSWORD, testActor, uniqueName } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { addIdentity, signIn, startFlow, submit } from '../flows/helpers.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describeEachDatabase('webhooks', (kind) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let worker: OutboxWorker;

  beforeEach(async () => {
    t = await createTestApp(kind, { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'on' });
    receiver = await WebhookReceiver.start();
    worker = buildCourier(
      { smtpUrl: null, from: 'Tessera <t@example.com>', templatesDir: null },
      {
        store: t.deps.store,
        clock: t.clock,
        counters: new OutboxCounters(),
        log: quiet,
        // Signed at the real time: the receiver's verifier checks the timestamp against it.
        webhooks: {
          ...t.deps,
          transport: t.deps.webhooks.transport,
          clock: new FakeClock(Date.now()),
        },
      },
    );
  });

  afterEach(async () => {
    await worker.stop();
    await receiver.stop();
    await t.close();
  });

  async function subscribe(events: readonly string[] = WEBHOOK_EVENT_TYPES) {
    const created = await createWebhook(t.deps, testActor, { url: receiver.url, events });
    receiver.secret = created.secret;
    return created.webhook;
  }

  async function deliver() {
    await t.deps.audit.flush();
    await worker.drain();
  }

  it('posts the events of changes made through the API, each signed and verified', async () => {
    await subscribe();
    const token = await t.token('direct_auth', 'identity_write', 'revoke');
    const username = uniqueName();
    const registered = await t.call('POST', '/v1/register', token, {
      username,
      password: PASSWORD,
    });
    expect(registered.statusCode).toBe(201);
    const id = (registered.json() as { id: string }).id;
    const profile = { display_name: 'Ada' };
    expect((await t.call('PATCH', `/v1/identities/${id}/profile`, token, profile)).statusCode).toBe(
      200,
    );
    const signIn = await t.call('POST', '/v1/authenticate/password', token, {
      username,
      password: PASSWORD,
    });
    expect(signIn.statusCode).toBe(200);
    const wrong = await t.call('POST', '/v1/authenticate/password', token, {
      username,
      password: 'not the password at all',
    });
    expect(wrong.statusCode).toBe(401);
    const sessionToken = (signIn.json() as { token: string }).token;
    expect(
      (await t.call('POST', '/v1/sessions/revoke', token, { token: sessionToken })).statusCode,
    ).toBe(204);
    await setIdentityState(t.deps, testActor, id, 'disabled');
    await setIdentityState(t.deps, testActor, id, 'active');
    await deliver();

    expect(receiver.unverified).toBe(0);
    // A batch is sent concurrently: events arrive in no guaranteed order (docs/webhooks.md).
    expect(receiver.types().sort()).toEqual(
      [
        'identity.created',
        'identity.updated',
        'session.created',
        'sign_in.failed',
        'session.revoked',
        'identity.disabled',
        'identity.enabled',
      ].sort(),
    );
    const byType = Object.fromEntries(receiver.received.map((w) => [w.type, w.data]));
    expect(byType['identity.created']).toEqual({ identity_id: id, username });
    expect(byType['session.created']).toMatchObject({
      identity_id: id,
      method: 'password',
      aal: 'aal1',
    });
    expect(byType['sign_in.failed']).toMatchObject({
      reason: 'invalid_credentials',
    });
    for (const webhook of receiver.received) {
      expect(webhook.body).not.toContain(PASSWORD);
      expect(webhook.body).not.toContain('not the password at all');
    }
    expect(new Set(receiver.received.map((w) => w.id)).size).toBe(receiver.received.length);
  });

  it('posts the browser flow’s sign-ins (buffered audit rows) and a password change', async () => {
    await subscribe(['session.created', 'sign_in.failed', 'password.changed']);
    const alice = await addIdentity(t, 'alice');
    const flow = await startFlow(t);
    const wrong = await submit(t, flow.id, {
      username: 'alice',
      password: 'wrong but long enough',
      csrf_token: flow.csrf_token,
    });
    expect(wrong.statusCode).toBe(401);
    expect((await signIn(t, await startFlow(t))).statusCode).toBe(200);
    const token = await t.token('direct_auth');
    const changed = await t.call('PUT', `/v1/identities/${alice.id}/password`, token, {
      password: 'another correct horse staple',
    });
    expect(changed.statusCode).toBe(204);
    await deliver();

    expect(receiver.unverified).toBe(0);
    expect(receiver.types().sort()).toEqual(
      ['password.changed', 'session.created', 'sign_in.failed'].sort(),
    );
    const byType = Object.fromEntries(receiver.received.map((w) => [w.type, w.data]));
    expect(byType['session.created']).toMatchObject({
      identity_id: alice.id,
      username: 'alice',
      method: 'password',
      aal: 'aal1',
    });
    expect(byType['sign_in.failed']).toMatchObject({
      identity_id: alice.id,
      username: 'alice',
      reason: 'invalid_credentials',
    });
    expect(byType['password.changed']).toMatchObject({ identity_id: alice.id });
    for (const webhook of receiver.received) {
      expect(webhook.body).not.toContain('wrong but long enough');
      expect(webhook.body).not.toContain('another correct horse staple');
    }
  });

  it('emits only subscribed events, nothing for a change rolled back, nothing once deleted', async () => {
    const webhook = await subscribe(['identity.created']);
    const token = await t.token('direct_auth');
    const username = uniqueName();
    await t.call('POST', '/v1/register', token, { username, password: PASSWORD });
    // The same username again: refused, its transaction rolled back.
    expect(
      (await t.call('POST', '/v1/register', token, { username, password: PASSWORD })).statusCode,
    ).toBe(409);
    await t.call('POST', '/v1/authenticate/password', token, { username, password: PASSWORD });
    await deliver();
    expect(receiver.types()).toEqual(['identity.created']);

    await deleteWebhook(t.deps, testActor, webhook.id);
    await t.call('POST', '/v1/register', token, { username: uniqueName(), password: PASSWORD });
    await deliver();
    expect(receiver.received).toHaveLength(1);
  });

  it('delivers everything to a receiver that was down, on the retry schedule, same webhook-id', async () => {
    await subscribe(['identity.created']);
    const token = await t.token('direct_auth');
    let down = true;
    receiver.answer = () => (down ? 503 : 200);
    for (let i = 0; i < 3; i += 1) {
      await t.call('POST', '/v1/register', token, { username: uniqueName(), password: PASSWORD });
    }
    await deliver();
    expect(receiver.received).toHaveLength(0);
    const waiting = await listDeliveries(t.deps.store, {});
    expect(waiting.map((d) => d.state)).toEqual(['pending', 'pending', 'pending']);
    expect(waiting[0]!.last_error).toBe('the receiver answered 503');

    // Down for a minute: each retry on the schedule fails, none is given up.
    let elapsed = 0;
    for (const wait of RETRY_DELAYS_MS.slice(0, 2)) {
      t.clock.advance(wait);
      elapsed += wait;
      await worker.drain();
    }
    expect(elapsed).toBeGreaterThanOrEqual(30_000);
    t.clock.advance(60_000 - elapsed + RETRY_DELAYS_MS[2]);
    down = false;
    await worker.drain();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((w) => w.id))).toEqual(new Set(waiting.map((d) => d.id)));
    expect((await listDeliveries(t.deps.store, {})).map((d) => d.state)).toEqual([
      'sent',
      'sent',
      'sent',
    ]);
  });

  it('sends a failed delivery again, audited, with the same webhook-id', async () => {
    const webhook = await subscribe(['identity.created']);
    await t.call('POST', '/v1/register', await t.token('direct_auth'), {
      username: uniqueName(),
      password: PASSWORD,
    });
    // Deleted after the event was queued, behind the service's back: the row fails for good.
    await t.deps.store.transaction((tx) => tx.deleteWebhook(webhook.id));
    await deliver();
    const [failed] = await listDeliveries(t.deps.store, {});
    expect(failed).toMatchObject({ state: 'failed', last_error: 'the webhook was deleted' });
    await expect(resendDelivery(t.deps, testActor, failed!.id)).resolves.toBeUndefined();
    expect((await listDeliveries(t.deps.store, {}))[0]!.state).toBe('pending');
  });
});

describeEachDatabase('webhook URLs', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://10.1.2.3/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]:9000/',
    'http://[::ffff:127.0.0.1]/',
    'http://localhost:3000/hook',
    'ftp://example.com/',
    'https://user:secret@example.com/hook',
  ])('refuses %s without SERVICE_WEBHOOK_ALLOW_PRIVATE=on', async (url) => {
    await expect(
      createWebhook(t.deps, testActor, { url, events: ['identity.created'] }),
    ).rejects.toMatchObject({ code: 'validation_error' });
    expect(await t.deps.store.listWebhooks()).toEqual([]);
  });

  it('refuses a private address at delivery time too (a name that resolves elsewhere later)', async () => {
    const transport = httpWebhookTransport(false);
    const message = { id: 'x', at: new Date(), body: '{}', secret: 'whsec_' + 'A'.repeat(44) };
    await expect(transport.post('http://localhost:1/', message)).rejects.toMatchObject({
      reason: 'private_address',
    });
  });

  it('refuses credentials in the URL, even where private addresses are allowed', async () => {
    const transport = httpWebhookTransport(true);
    await expect(transport.check('http://user:secret@127.0.0.1:1/')).rejects.toMatchObject({
      reason: 'credentials',
    });
  });

  it('refuses an unknown event name', async () => {
    await expect(
      createWebhook(t.deps, testActor, { url: 'https://example.com/', events: ['identity.eaten'] }),
    ).rejects.toMatchObject({ code: 'validation_error' });
  });
});
