import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';
import { STEP_MS, enrolTotp, signedIn, totpCode } from '../second-factor/helpers.js';
import { codeOf, courierFor, wrongCode } from '../verification/helpers.js';
import { EMAIL_CODE_ON, userWithAddress } from './helpers.js';

/**
 * Issue 23 item 6 in a real browser without JavaScript, against a real SMTP server: the
 * hosted login page's email code block, the mail, the code page.
 */
describeInChromium('sign-in by email code in Chromium', () => {
  let t: TestApp;
  let writer: string;
  let tessera: string;
  let browser: Browser;
  let smtp: TestSmtp;
  let worker: OutboxWorker;

  beforeAll(async () => {
    t = await createTestApp('sqlite', { ...LOOSE_SIGN_IN_LIMITS, ...EMAIL_CODE_ON });
    writer = await t.token('identity_write');
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

  /** The code of the newest mail to `address`, once the outbox has sent it. */
  async function mailedCode(address: string): Promise<string> {
    await worker.drain();
    const mail = smtp.received
      .filter(({ to }) => !Array.isArray(to) && to?.text === address)
      .at(-1);
    expect(mail, `no mail to ${address}`).toBeDefined();
    return codeOf(mail!);
  }

  async function askForCode(page: Page, address: string): Promise<void> {
    await page.goto(`${tessera}/v1/login`);
    await page.getByLabel('Email address').fill(address);
    await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
    expect(await page.title()).toBe('Enter the code from the mail · Tessera');
  }

  it('signs in with the mailed code; a wrong one is shown as wrong', async () => {
    const { user, address } = await userWithAddress({ t, writer });
    const page = await device();
    await askForCode(page, address);
    const code = await mailedCode(address);

    await page.getByLabel('Code from the mail').fill(wrongCode(code));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    expect(await page.getByRole('alert').textContent()).toContain('That code is not right');

    await page.getByLabel('Code from the mail').fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    expect(await page.title()).toBe('Signed in · Tessera');
    expect(await page.locator('main').textContent()).toContain(user.username);
  });

  it('a malformed address is asked for again; a second factor is asked for after the code', async () => {
    const { user, address } = await userWithAddress({ t, writer });
    const { secret } = await enrolTotp(t, await signedIn(t, user.username));
    const page = await device();
    await page.goto(`${tessera}/v1/login`);
    // The input is type=email: the browser itself refuses "not an address" before posting.
    await page.getByLabel('Email address').fill('someone@localhost');
    await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
    expect(await page.title()).toBe('Sign in with an email code · Tessera');
    expect(await page.getByRole('alert').textContent()).toContain('not an email address');

    await page.getByLabel('Email address').fill(address);
    await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
    await page.getByLabel('Code from the mail').fill(await mailedCode(address));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    expect(await page.title()).toBe('Two-step verification · Tessera');

    t.clock.advance(STEP_MS);
    await page
      .getByLabel('Code from your authenticator app')
      .fill(await totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    expect(await page.title()).toBe('Signed in · Tessera');
  });
});
