import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { NEW_PASSWORD, PASSWORD, addUser } from '../account/helpers.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { STEP_MS, enrolTotp, signedIn, totpCode } from '../second-factor/helpers.js';
import { courierFor } from '../verification/helpers.js';

/** Issue 23 item 5 in a real browser, without JavaScript, against a real SMTP server. */
describeInChromium('account recovery in Chromium', () => {
  let t: TestApp;
  let tessera: string;
  let browser: Browser;
  let smtp: TestSmtp;
  let worker: OutboxWorker;
  let writer: string;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    tessera = await listenForBrowser(t);
    browser = await sharedChromium();
    smtp = await startTestSmtp();
    worker = courierFor(t, smtp);
    writer = await t.token('identity_write');
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

  async function userWithAddress() {
    const user = await addUser(t);
    const email = `${user.username}@example.com`;
    await t.call('PUT', `/v1/identities/${user.id}/email`, writer, { email, verified: true });
    await worker.drain();
    return { ...user, email };
  }

  async function signIn(page: Page, username: string, password = PASSWORD): Promise<void> {
    await page.goto(`${tessera}/v1/account`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${tessera}/v1/account`);
  }

  /** From the login page's link to the mail: answers the newest mail's text. */
  async function askForMail(page: Page, email: string): Promise<string> {
    await page.goto(`${tessera}/v1/login`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    expect(await page.title()).toBe('Recover your account · Tessera');
    await worker.drain(); // earlier notices are not this mail
    const before = smtp.received.length;
    await page.getByLabel('Email address').fill(email);
    // The answer is a new document: its title is read once it has loaded.
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Send a code' }).click(),
    ]);
    expect(await page.title()).toBe('Check your mail · Tessera');
    await worker.drain();
    expect(smtp.received.length).toBe(before + 1);
    return smtp.received.at(-1)!.text ?? '';
  }

  const codeIn = (text: string) => /\b(\d{6})\b/.exec(text)![1]!;

  it('forgot the password: recovers by mail, and the old sessions are gone', async () => {
    const user = await userWithAddress();
    const laptop = await device();
    await signIn(laptop, user.username);

    const phone = await device();
    const mail = await askForMail(phone, user.email);
    await phone
      .getByLabel('Code from the mail')
      .fill('000000' === codeIn(mail) ? '111111' : '000000');
    await phone.getByRole('button', { name: 'Continue' }).click();
    expect(await phone.getByRole('alert').textContent()).toContain('That code is not right');
    await phone.getByLabel('Code from the mail').fill(codeIn(mail));
    await phone.getByRole('button', { name: 'Continue' }).click();
    expect(await phone.title()).toBe('Choose a new password · Tessera');
    expect(await phone.getByLabel('Code from your authenticator app').count()).toBe(0);
    await phone.getByLabel('New password').fill(NEW_PASSWORD);
    await phone.getByRole('button', { name: 'Set the password and sign in' }).click();
    expect(await phone.title()).toBe('Password changed · Tessera');

    // The phone is signed in; the laptop's session ended.
    await phone.goto(`${tessera}/v1/account`);
    expect(await phone.title()).not.toContain('Sign in');
    const laptopWhoami = await laptop.request.get(`${tessera}/v1/whoami`);
    expect(laptopWhoami.status()).toBe(401);
    const fresh = await device();
    await signIn(fresh, user.username, NEW_PASSWORD);
  });

  it('an unknown address gets the same page and no mail', async () => {
    const page = await device();
    await page.goto(`${tessera}/v1/recovery`);
    await worker.drain();
    const before = smtp.received.length;
    await page.getByLabel('Email address').fill('no-such-user@example.com');
    // The answer is a new document: its title is read once it has loaded.
    await Promise.all([
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Send a code' }).click(),
    ]);
    expect(await page.title()).toBe('Check your mail · Tessera');
    await worker.drain();
    expect(smtp.received.length).toBe(before);
  });

  it('with TOTP: the mail alone is not enough; a TOTP code (or a recovery code, by the link) is', async () => {
    const user = await userWithAddress();
    const session = await signedIn(t, user.username);
    const { secret, recoveryCodes } = await enrolTotp(t, session);

    const page = await device();
    const mail = await askForMail(page, user.email);
    await page.getByLabel('Code from the mail').fill(codeIn(mail));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the password and sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('two-step sign-in');
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    t.clock.advance(STEP_MS);
    await page
      .getByLabel('Code from your authenticator app')
      .fill(await totpCode(secret, t.clock.now()));
    await page.getByRole('button', { name: 'Set the password and sign in' }).click();
    expect(await page.title()).toBe('Password changed · Tessera');

    // Again from the mailed link, with a recovery code in place of the app.
    const other = await device();
    const second = await askForMail(other, user.email);
    const link = /(http\S+\/v1\/recovery\?\S+)/.exec(second)![1]!;
    const reader = await device();
    await reader.goto(link);
    await reader.getByRole('button', { name: 'Continue' }).click();
    await reader.getByLabel('New password').fill(`${NEW_PASSWORD} twice`);
    await reader.getByLabel('Or one of your recovery codes').fill(recoveryCodes[0]!);
    await reader.getByRole('button', { name: 'Set the password and sign in' }).click();
    expect(await reader.title()).toBe('Password changed · Tessera');
  });
});
