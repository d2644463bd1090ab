import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/core.js';
import {
  addAlice,
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { STEP_MS, totpCode } from '../second-factor/helpers.js';

/**
 * A request with the browser profile's own cookies (the hosted pages' CSP lets no script
 * of theirs fetch, so the test does not run one there).
 */
async function fetchFrom(page: Page, url: string, method = 'GET') {
  const res = await page.request.fetch(url, { method, headers: { accept: 'application/json' } });
  const text = await res.text();
  return { status: res.status(), body: text ? JSON.parse(text) : null };
}

/**
 * Issue 13, done when: a user enrols TOTP on the hosted page, signs out, signs in with
 * password plus a code the test computes, is refused on a replayed code, and signs in with
 * a recovery code once and not twice. On SQLite and on PostgreSQL.
 */
describeInChromium('two-step verification in a real browser', () => {
  describeEachDatabase('hosted pages', (kind) => {
    let t: TestApp;
    let tessera: string;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const violations: string[] = [];

    beforeAll(async () => {
      t = await createTestApp(kind, {});
      await addAlice(t);
      tessera = await listenForBrowser(t);
      browser = await sharedChromium();
      context = await browser.newContext({ javaScriptEnabled: true });
      context.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
      });
      page = await context.newPage();
    });
    afterAll(async () => {
      await releaseChromium(browser);
      await t?.close();
    });

    async function passwordStep(returnTo?: string) {
      const query = returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : '';
      await page.goto(`${tessera}/v1/login${query}`);
      await page.getByLabel('Username').fill('alice');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }

    async function signOut() {
      expect((await fetchFrom(page, `${tessera}/v1/logout`, 'POST')).status).toBe(204);
      expect((await fetchFrom(page, `${tessera}/v1/whoami`)).status).toBe(401);
    }

    let secret = '';
    let recoveryCodes: string[] = [];

    it('enrols an authenticator on the hosted account page', async () => {
      await passwordStep(`${tessera}/v1/account/two-factor`);
      await page.waitForURL(`${tessera}/v1/account/two-factor`);
      expect(await page.title()).toBe('Two-step verification · Tessera');
      expect(await page.locator('#two-factor-status').textContent()).toContain('off');

      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      await expect.poll(() => page.locator('.qr svg').count()).toBe(1);
      secret = ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s+/g, '');
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      const link = await page.getByRole('link', { name: 'Open in an app on this device' });
      expect(await link.getAttribute('href')).toContain(`secret=${secret}`);

      await page.getByLabel('Code from the app').fill('000000');
      await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
      expect(await page.getByRole('alert').textContent()).toMatch(/code is not right/);

      // The failed try showed the page without the key: start again, with a new key.
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      secret = ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s+/g, '');
      await page.getByLabel('Code from the app').fill(await totpCode(secret, t.clock.now()));
      await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
      recoveryCodes = await page.locator('#recovery-codes li').allTextContents();
      expect(recoveryCodes).toHaveLength(10);
      await page.getByRole('link', { name: 'Done' }).click();
      expect(await page.locator('#two-factor-status').textContent()).toContain('on');
      expect(await page.locator('#recovery-codes-left').textContent()).toContain('10 unused');
      await signOut();
    });

    it('signs in with the password and a code; whoami says aal2', async () => {
      t.clock.advance(STEP_MS);
      await passwordStep();
      expect(await page.locator('h1').textContent()).toBe('Two-step verification');
      expect((await fetchFrom(page, `${tessera}/v1/whoami`)).status).toBe(401);
      await page
        .getByLabel('Code from your authenticator app')
        .fill(await totpCode(secret, t.clock.now()));
      await page.getByRole('button', { name: 'Verify' }).click();
      expect(await page.locator('h1').textContent()).toBe('Signed in');
      const whoami = await fetchFrom(page, `${tessera}/v1/whoami`);
      expect(whoami.body).toMatchObject({ authenticated_via: 'password', aal: 'aal2' });
      await signOut();
    });

    it('refuses the same code again (same time step), and takes a recovery code once', async () => {
      await passwordStep();
      await page
        .getByLabel('Code from your authenticator app')
        .fill(await totpCode(secret, t.clock.now()));
      await page.getByRole('button', { name: 'Verify' }).click();
      expect(await page.getByRole('alert').textContent()).toMatch(/code is not right/);
      expect((await fetchFrom(page, `${tessera}/v1/whoami`)).status).toBe(401);

      await page.getByText('Use a recovery code').click();
      await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
      await page.getByRole('button', { name: 'Use recovery code' }).click();
      expect(await page.locator('h1').textContent()).toBe('Signed in');
      expect((await fetchFrom(page, `${tessera}/v1/whoami`)).body).toMatchObject({ aal: 'aal2' });
      await signOut();

      await passwordStep();
      await page.getByText('Use a recovery code').click();
      await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
      await page.getByRole('button', { name: 'Use recovery code' }).click();
      expect(await page.getByRole('alert').textContent()).toMatch(/already used/);
      expect((await fetchFrom(page, `${tessera}/v1/whoami`)).status).toBe(401);
      expect(violations).toEqual([]);
    });
  });
});
