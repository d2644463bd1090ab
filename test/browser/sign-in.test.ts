import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashToken } from '../../src/lib/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/core.js';
import {
  addAlice,
  describeInChromium,
  fetchInPage,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
  TabPool,
} from '../helpers/chromium.js';
import { type AppSite, startAppSite } from './pages.js';

const SCREENSHOTS = 'test-results';

describeInChromium('hosted sign-in in a real browser', () => {
  let t: TestApp;
  let app: AppSite;
  let unlisted: AppSite;
  let tessera: string;
  let browser: Browser;
  let tabs: TabPool;

  beforeAll(async () => {
    app = await startAppSite('App');
    unlisted = await startAppSite('Unlisted');
    t = await createTestApp('sqlite', { SERVICE_SESSION_CORS_ORIGINS: app.origin });
    await addAlice(t);
    tessera = await listenForBrowser(t);
    browser = await sharedChromium();
    tabs = new TabPool(browser);
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await t?.close();
    await app?.close();
    await unlisted?.close();
  });

  /** A fresh browser profile that records CSP violations reported on its pages. */
  async function newContext(options: { javaScriptEnabled?: boolean } = {}) {
    const tab = await tabs.open(options);
    const violations: string[] = [];
    tab.context.on('console', (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
    });
    return { ...tab, violations };
  }

  async function signInThroughPage(page: Page, password = PASSWORD) {
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  it('signs in through the hosted page, lands on return_to with the cookie, uses and ends the session', async () => {
    const { context, page, close, violations } = await newContext();
    const returnTo = `${app.origin}/home?from=login`;
    await page.goto(`${tessera}/v1/login?return_to=${encodeURIComponent(returnTo)}`);
    expect(await page.title()).toBe('Sign in · Tessera');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await page.screenshot({ path: `${SCREENSHOTS}/login-page.png`, fullPage: true });

    await signInThroughPage(page);
    await page.waitForURL(returnTo);
    expect(await page.locator('h1').textContent()).toBe('App /home');

    const cookies = await context.cookies(tessera);
    const session = cookies.find((cookie) => cookie.name === 'service_session');
    expect(session).toMatchObject({
      httpOnly: true,
      secure: true,
      sameSite: 'Lax',
      path: '/',
      domain: '127.0.0.1',
    });
    expect(session!.value).toMatch(/^tess_s_/);
    // HttpOnly: no script can read it, not even here (cookies do not separate ports, so a
    // readable cookie of 127.0.0.1 would show up in this page's document.cookie).
    expect(await page.evaluate('document.cookie')).not.toContain('tess_s_');

    // whoami from the listed origin, with credentials: the browser sends the cookie and
    // lets the page read the answer.
    const who = await fetchInPage(page, `${tessera}/v1/whoami`);
    expect(who).toMatchObject({ status: 200, body: { identity: { username: 'alice' } } });

    // The same call from an origin not in SERVICE_SESSION_CORS_ORIGINS is refused by the
    // browser: no CORS headers, so the page cannot read anything.
    const other = await context.newPage();
    await other.goto(`${unlisted.origin}/probe`);
    expect(await fetchInPage(other, `${tessera}/v1/whoami`)).toEqual({ failed: 'TypeError' });
    expect(await fetchInPage(other, `${tessera}/v1/logout`, 'POST')).toEqual({
      failed: 'TypeError',
    });

    // Logout from the listed origin revokes the session and clears the cookie.
    expect(await fetchInPage(page, `${tessera}/v1/logout`, 'POST')).toEqual({
      status: 204,
      body: null,
    });
    expect((await context.cookies(tessera)).map((cookie) => cookie.name)).not.toContain(
      'service_session',
    );
    expect(await fetchInPage(page, `${tessera}/v1/whoami`)).toEqual({
      status: 401,
      body: { error: 'invalid_token' },
    });
    // Revoked in the database, not merely forgotten by the browser.
    const revoked = await t.deps.store.findSessionByTokenHash(hashToken(session!.value));
    expect(revoked?.session.revoked_at).not.toBeNull();
    expect(violations).toEqual([]);
    await close();
  });

  it('shows a wrong password in the form and signs in on the retry', async () => {
    const { page, close, violations } = await newContext();
    await page.goto(`${tessera}/v1/login?return_to=${encodeURIComponent(`${app.origin}/home`)}`);
    await signInThroughPage(page, 'wrong password');
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toBe('The username or password is incorrect.');
    expect(await page.getByLabel('Username').inputValue()).toBe('alice');
    await page.screenshot({ path: `${SCREENSHOTS}/login-page-error.png`, fullPage: true });

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${app.origin}/home`);
    expect(violations).toEqual([]);
    await close();
  });

  it('works with JavaScript off, and without return_to shows the signed-in page', async () => {
    const { context, page, close } = await newContext({ javaScriptEnabled: false });
    await page.goto(`${tessera}/v1/login`);
    await signInThroughPage(page);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Signed in');
    expect(await page.locator('main').textContent()).toContain('Alice Example');
    const cookies = await context.cookies(tessera);
    expect(cookies.find((cookie) => cookie.name === 'service_session')?.httpOnly).toBe(true);
    await close();
  });

  it('cannot be framed by another page', async () => {
    const { page, close } = await newContext();
    await page.goto(`${app.origin}/frame`);
    // A string, not a function: the test program is compiled without the DOM library.
    await page.evaluate(`new Promise((resolve) => {
      const frame = document.createElement('iframe');
      frame.src = ${JSON.stringify(`${tessera}/v1/login`)};
      frame.addEventListener('load', resolve);
      document.body.append(frame);
    })`);
    const framed = page.frames().find((frame) => frame !== page.mainFrame());
    expect(framed).toBeDefined();
    expect(await framed!.locator('form').count()).toBe(0);
    await close();
  });
});
