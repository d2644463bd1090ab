import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { PASSWORD, addUser } from '../account/helpers.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { courierFor } from './helpers.js';

/** Issue 23 item 4 in a real browser, without JavaScript: the account form, the mail, the code. */
describeInChromium('email verification in Chromium', () => {
  let t: TestApp;
  let tessera: string;
  let browser: Browser;
  let smtp: TestSmtp;
  let worker: OutboxWorker;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    tessera = await listenForBrowser(t);
    browser = await sharedChromium();
    smtp = await startTestSmtp();
    worker = courierFor(t, smtp);
  });
  afterAll(async () => {
    await worker?.stop();
    await smtp?.stop();
    await releaseChromium(browser);
    await t?.close();
  });

  async function device(): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: false });
    context.setDefaultTimeout(5_000);
    return context.newPage();
  }

  async function signedInAccount(page: Page, username: string): Promise<void> {
    await page.goto(`${tessera}/v1/account`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${tessera}/v1/account`);
  }

  /** The newest mail's text, once the outbox has sent it. */
  async function newestMail(): Promise<string> {
    await worker.drain();
    return smtp.received.at(-1)!.text ?? '';
  }

  it('changes the address from the account page with the mailed code', async () => {
    const user = await addUser(t);
    const page = await device();
    await signedInAccount(page, user.username);
    const address = `${user.username}@example.com`;
    await page.getByLabel('New email address').fill(address);
    await page.getByRole('button', { name: 'Change email address' }).click();
    expect(await page.title()).toBe('Confirm your email address · Tessera');

    const code = /\b(\d{6})\b/.exec(await newestMail())![1]!;
    // Back on the account page before entering it: the address waits, and the page leads
    // back to where its code goes.
    await page.goto(`${tessera}/v1/account`);
    expect(await page.locator('#pending-email').textContent()).toContain(
      `A code was mailed to ${address}`,
    );
    await page.getByRole('link', { name: 'Enter the code' }).click();
    expect(await page.title()).toBe('Confirm your email address · Tessera');
    await page.getByLabel('Code from the mail').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    expect(await page.getByRole('alert').textContent()).toContain('That code is not right');

    await page.getByLabel('Code from the mail').fill(code);
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    expect(await page.title()).toBe('Email address confirmed · Tessera');

    await page.goto(`${tessera}/v1/account`);
    const section = page.getByRole('region', { name: 'Email address' });
    expect(await section.textContent()).toContain(address);
    expect(await section.textContent()).toContain('Confirmed');
    expect(await page.locator('#pending-email').count()).toBe(0);
  });

  it('opening the mailed link shows a button; only the button confirms', async () => {
    const user = await addUser(t);
    const page = await device();
    await signedInAccount(page, user.username);
    const address = `${user.username}@link.example.com`;
    await page.getByLabel('New email address').fill(address);
    await page.getByRole('button', { name: 'Change email address' }).click();

    const link = /(http\S+\/v1\/verification\?\S+)/.exec(await newestMail())![1]!;
    // Another device (the phone the mail is read on), not signed in.
    const phone = await device();
    await phone.goto(link);
    const before = await t.call('GET', `/v1/identities/${user.id}`, await t.token('identity_read'));
    expect(before.json().email).toBeNull();
    await phone.getByRole('button', { name: 'Confirm address' }).click();
    expect(await phone.title()).toBe('Email address confirmed · Tessera');
    const after = await t.call('GET', `/v1/identities/${user.id}`, await t.token('identity_read'));
    expect(after.json()).toMatchObject({ email: address, email_verified: true });
  });
});
