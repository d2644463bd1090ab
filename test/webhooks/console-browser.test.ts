import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { OutboxCounters, type OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { systemClock } from '../../src/lib/clock.js';
import { auditRows, getPage, operatorAtAal2 } from '../admin/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { PASSWORD, uniqueName } from '../helpers/core.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

describeInChromium('the console’s Webhooks page in Chromium', () => {
  let t: TestApp;
  let tessera: string;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let worker: OutboxWorker;

  beforeAll(async () => {
    t = await createTestApp('sqlite', { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'on' });
    tessera = await listenForBrowser(t);
    browser = await sharedChromium();
    receiver = await WebhookReceiver.start();
    worker = buildCourier(
      { smtpUrl: null, from: 'Tessera <t@example.com>', templatesDir: null },
      {
        store: t.deps.store,
        clock: t.clock,
        counters: new OutboxCounters(),
        log: quiet,
        webhooks: { ...t.deps, transport: t.deps.webhooks.transport, clock: systemClock },
      },
    );
  });
  afterAll(async () => {
    await worker?.stop();
    await releaseChromium(browser);
    await receiver?.stop();
    await t?.close();
  });

  async function operatorPage(session: string): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: false });
    context.setDefaultTimeout(5_000);
    await context.addCookies([{ name: 'service_session', value: session, url: tessera }]);
    return context.newPage();
  }

  it('creates a webhook showing its secret once, lists deliveries, sends one again, deletes', async () => {
    const root = await operatorAtAal2(t);
    const page = await operatorPage(root.session);
    await page.goto(`${tessera}/v1/admin`);
    await page.getByRole('link', { name: 'Webhooks' }).first().click();
    expect(await page.locator('h1').textContent()).toBe('Webhooks');

    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('identity.created').check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = (await page.locator('#created-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    receiver.secret = secret;
    // Shown once: the list afterwards holds the URL, never the secret.
    const listed = await getPage(t, root.session, '/v1/admin/webhooks');
    expect(listed.body).toContain(receiver.url);
    expect(listed.body).not.toContain(secret);

    // The receiver is down: the delivery waits for its retry, listed with its error.
    receiver.answer = () => 503;
    const token = await t.token('direct_auth');
    await t.call('POST', '/v1/register', token, { username: uniqueName(), password: PASSWORD });
    await t.deps.audit.flush();
    await worker.drain();
    await page.goto(`${tessera}/v1/admin/webhooks`);
    const row = page.locator('table.deliveries tbody tr');
    expect(await row.textContent()).toContain('the receiver answered 503');

    // Back up: "Send again" brings the retry forward, same webhook-id.
    receiver.answer = () => 200;
    await row.getByRole('button', { name: /Send .* again/ }).click();
    await page.waitForURL(`${tessera}/v1/admin/webhooks?done=resent`);
    await worker.drain();
    expect(receiver.types()).toEqual(['identity.created']);
    expect(receiver.unverified).toBe(0);

    await page.getByRole('button', { name: `Delete ${receiver.url}` }).click();
    await page.waitForURL(`${tessera}/v1/admin/webhooks?done=deleted`);
    expect(await page.getByRole('status').textContent()).toBe('The webhook was deleted.');
    for (const action of ['webhook_create', 'webhook_resend', 'webhook_delete']) {
      expect((await auditRows(t, action)).at(-1)).toMatchObject({
        service_name: 'admin',
        service_id: root.identity.id,
      });
    }
  });
});
