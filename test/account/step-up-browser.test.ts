import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { LOOSE_SIGN_IN_LIMITS, PASSWORD } from '../flows/helpers.js';
import { STEP_MS, enrolledIdentity, totpCode } from '../second-factor/helpers.js';

/**
 * Issue 22 item 5 on the hosted pages: a link sign-in (aal1) of an identity with TOTP sees
 * a step-up prompt instead of the forms; its link signs in again with the password and a
 * code and comes back, and the change then goes through. No script runs on these pages.
 */
describeInChromium('stepping up on the hosted two-factor page', () => {
  describeEachDatabase('a link session of an identity with TOTP', (kind) => {
    let t: TestApp;
    let tessera: string;
    let browser: Browser;
    let context: BrowserContext;
    beforeAll(async () => {
      t = await createTestApp(kind, LOOSE_SIGN_IN_LIMITS);
      tessera = await listenForBrowser(t);
      browser = await sharedChromium();
    });
    afterAll(async () => {
      await context?.close();
      await releaseChromium(browser);
      await t?.close();
    });

    it('shows the prompt, signs in with the code through it, then turns TOTP off', async () => {
      const { username, identity, secret } = await enrolledIdentity(t, `step-up-${kind}`);
      const pair = { provider: 'mail', subject: `${username}@example.com` };
      const linker = await t.token('external_auth');
      const attached = await t.call(
        'POST',
        `/v1/identities/${identity.id}/links`,
        await t.token('external_link'),
        { ...pair, verified: true },
      );
      expect(attached.statusCode, attached.body).toBe(201);
      const signedIn = await t.call('POST', '/v1/authenticate/link', linker, pair);
      expect(signedIn.json().session.aal).toBe('aal1');

      // The backend hands the link session to the browser as its cookie.
      context = await browser.newContext({ javaScriptEnabled: false });
      context.setDefaultTimeout(5_000);
      await context.addCookies([
        { name: 'service_session', value: signedIn.json().token as string, url: tessera },
      ]);
      const page = await context.newPage();
      await page.goto(`${tessera}/v1/account/two-factor`);
      expect(await page.locator('#two-factor-status').textContent()).toContain('on');
      expect(await page.locator('#step-up').textContent()).toContain(
        'needs a sign-in with your second factor',
      );
      expect(
        await page.getByRole('button', { name: 'Turn off two-step verification' }).count(),
      ).toBe(0);

      await page.getByRole('link', { name: 'Sign in again with your second factor' }).click();
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      t.clock.advance(STEP_MS);
      await page
        .getByLabel('Code from your authenticator app')
        .fill(await totpCode(secret, t.clock.now()));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${tessera}/v1/account/two-factor`);
      const whoami = await context.request.get(`${tessera}/v1/whoami`);
      expect(await whoami.json()).toMatchObject({ authenticated_via: 'password', aal: 'aal2' });

      expect(await page.locator('#step-up').count()).toBe(0);
      await page.getByRole('button', { name: 'Turn off two-step verification' }).click();
      expect(await page.getByRole('status').textContent()).toBe(
        'Two-step verification is now off.',
      );
      expect(await t.deps.store.findTotpFactor(identity.id)).toBeUndefined();
    });
  });
});
