import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { FIREFOX, NEW_PASSWORD, PASSWORD, addUser } from './helpers.js';

const SCREENSHOTS = 'test-results';

/** Issue 14, "Done when": the account page in a real browser, without JavaScript. */
describeInChromium('account page in Chromium', () => {
  let t: TestApp;
  let tessera: string;
  let browser: Browser;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    tessera = await listenForBrowser(t);
    browser = await sharedChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await t?.close();
  });

  /** A separate browser profile (its own cookies): another device. No script runs in it. */
  async function device(userAgent?: string): Promise<Page> {
    const context = await browser.newContext({
      javaScriptEnabled: false,
      ...(userAgent ? { userAgent } : {}),
    });
    // A missing element fails the test at once, not after Playwright's 30 s.
    context.setDefaultTimeout(5_000);
    return context.newPage();
  }

  /** Opens the account page; signed out, that goes through the hosted login and back. */
  async function openAccount(page: Page, username: string, password = PASSWORD): Promise<void> {
    await page.goto(`${tessera}/v1/account`);
    if ((await page.title()) === 'Sign in · Tessera') {
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${tessera}/v1/account`);
    }
    expect(await page.title()).toBe('Your account · Tessera');
  }

  /** whoami with this device's cookie (the context's own request client shares its cookies). */
  async function whoami(page: Page): Promise<number> {
    return (await page.context().request.get(`${tessera}/v1/whoami`)).status();
  }

  function sessionItems(page: Page) {
    return page.getByRole('region', { name: 'Where you are signed in' }).getByRole('listitem');
  }

  it('two devices, one ends the other, changes the password; the ended ones stay signed out', async () => {
    const user = await addUser(t);
    const laptop = await device();
    await openAccount(laptop, user.username);
    expect(await sessionItems(laptop).count()).toBe(1);
    expect(await laptop.getByText('This device', { exact: true }).count()).toBe(1);
    expect(await laptop.getByText('You are signed in on this device only.').count()).toBe(1);

    const phone = await device(FIREFOX);
    await openAccount(phone, user.username);
    const tablet = await device(FIREFOX);
    await openAccount(tablet, user.username);

    await laptop.reload();
    expect(await sessionItems(laptop).count()).toBe(3);
    const current = sessionItems(laptop).filter({
      has: laptop.getByText('This device', { exact: true }),
    });
    expect(await current.textContent()).toContain('Chrome');
    expect(
      await sessionItems(laptop).filter({ hasText: 'Firefox 132 on Windows 10' }).count(),
    ).toBe(2);
    await laptop.screenshot({ path: `${SCREENSHOTS}/account-page.png`, fullPage: true });

    // End the phone's session from the laptop (the newest Firefox one is the tablet).
    const phoneItem = sessionItems(laptop).filter({ hasText: 'Firefox' }).last();
    await phoneItem
      .getByRole('button', { name: /^End the session on Firefox 132 on Windows 10/ })
      .click();
    await laptop.waitForURL(`${tessera}/v1/account?done=session`);
    expect(await laptop.getByRole('status').textContent()).toBe('The session was ended.');
    expect(await sessionItems(laptop).count()).toBe(2);
    const ended = [await whoami(phone), await whoami(tablet), await whoami(laptop)];
    expect(ended.sort()).toEqual([200, 200, 401]);
    const [endedDevice, otherDevice] =
      (await whoami(phone)) === 401 ? [phone, tablet] : [tablet, phone];

    // Change the password: the current password, the new one twice; other sessions end.
    await laptop.getByLabel('Current password').fill(PASSWORD);
    await laptop.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await laptop.getByLabel('New password again').fill(NEW_PASSWORD);
    await laptop.getByRole('button', { name: 'Change password' }).click();
    await laptop.waitForURL(`${tessera}/v1/account?done=password`);
    expect(await laptop.getByRole('status').textContent()).toContain('Your password was changed');
    expect(await whoami(laptop)).toBe(200);
    expect(await whoami(otherDevice)).toBe(401);
    // The session ended earlier stays ended.
    expect(await whoami(endedDevice)).toBe(401);
    expect(await sessionItems(laptop).count()).toBe(1);

    // The old password no longer signs in; the new one does.
    const later = await device();
    await later.goto(`${tessera}/v1/account`);
    await later.getByLabel('Username').fill(user.username);
    await later.getByLabel('Password').fill(PASSWORD);
    await later.getByRole('button', { name: 'Sign in' }).click();
    expect(await later.getByRole('alert').textContent()).toContain('incorrect');
    await later.getByLabel('Password').fill(NEW_PASSWORD);
    await later.getByRole('button', { name: 'Sign in' }).click();
    await later.waitForURL(`${tessera}/v1/account`);
    expect(await whoami(later)).toBe(200);
  });

  it('a link sign-in, then a password set without the old one', async () => {
    const linker = await t.token('external_auth');
    const username = `mailuser${Date.now() % 1_000_000}`;
    const res = await t.call('POST', '/v1/authenticate/link', linker, {
      provider: 'email',
      subject: `${username}@example.org`,
      seed: { username, display_name: 'Mail User' },
    });
    expect(res.statusCode, res.body).toBe(201);
    // The backend hands the new session to the browser as Tessera's cookie.
    const page = await device();
    await page.context().addCookies([
      {
        name: 'service_session',
        value: res.json().token,
        url: tessera,
        httpOnly: true,
        secure: true,
        sameSite: 'Lax',
      },
    ]);
    await page.goto(`${tessera}/v1/account`);
    expect(await page.title()).toBe('Your account · Tessera');
    expect(await page.getByRole('heading', { name: 'Set a password' }).count()).toBe(1);
    expect(await page.getByLabel('Current password').count()).toBe(0);
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('New password again').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set a password' }).click();
    await page.waitForURL(`${tessera}/v1/account?done=password`);
    await page.screenshot({ path: `${SCREENSHOTS}/account-password-set.png`, fullPage: true });

    const elsewhere = await device();
    await openAccount(elsewhere, username, NEW_PASSWORD);
    expect(await whoami(elsewhere)).toBe(200);
  });
});
