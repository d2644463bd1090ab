import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/core.js';
import {
  addAlice,
  describeInChromium,
  fetchInPage,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { type DatabaseKind, postgresAvailable } from '../helpers/databases.js';

const SCREENSHOTS = 'test-results';

const kinds: DatabaseKind[] = postgresAvailable ? ['sqlite', 'postgres'] : ['sqlite'];

for (const kind of kinds) {
  describeInChromium(`passkeys in a real browser [${kind}]`, () => {
    let t: TestApp;
    let tessera: string;
    let browser: Browser;

    beforeAll(async () => {
      t = await createTestApp(kind);
      await addAlice(t);
      // localhost, not 127.0.0.1: WebAuthn's relying party id must be a domain name.
      tessera = await listenForBrowser(t, 'localhost');
      browser = await sharedChromium();
      mkdirSync(SCREENSHOTS, { recursive: true });
    });
    afterAll(async () => {
      await releaseChromium(browser);
      await t?.close();
    });

    /** A browser profile with a platform authenticator that verifies its user by itself. */
    async function withAuthenticator() {
      const context: BrowserContext = await browser.newContext();
      const violations: string[] = [];
      context.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
      });
      const page = await context.newPage();
      if (process.env.DEBUG_PASSKEYS) {
        page.on('console', (m) => console.log('console:', m.text()));
        page.on('request', (r) => console.log('req:', r.method(), r.url()));
        page.on('response', (r) => console.log('res:', r.status(), r.url()));
      }
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });
      return { context, page, cdp, authenticatorId, violations };
    }

    it('password sign-in, a passkey added on the account page, sign-out, usernameless sign-in with it', async () => {
      const { context, page, cdp, authenticatorId, violations } = await withAuthenticator();
      const account = `${tessera}/v1/account/passkeys`;

      // Not signed in: the page sends the browser through the hosted login and back.
      await page.goto(account);
      expect(new URL(page.url()).pathname).toBe('/v1/login');
      await page.getByLabel('Username').fill('alice');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(account);
      expect(await page.locator('h1').textContent()).toBe('Passkeys');
      await expect.poll(() => page.locator('#needs-js').isHidden()).toBe(true);

      await page.getByLabel('Name of the new passkey (optional)').fill('Test laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await expect
        .poll(() => page.locator('.passkey-name').allTextContents())
        .toEqual(['Test laptop']);
      await page.screenshot({ path: `${SCREENSHOTS}/account-passkeys.png`, fullPage: true });
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]!.isResidentCredential).toBe(true);
      expect(credentials[0]!.rpId).toBe('localhost');

      expect((await fetchInPage(page, `${tessera}/v1/logout`, 'POST')).status).toBe(204);
      expect((await fetchInPage(page, `${tessera}/v1/whoami`)).status).toBe(401);

      // Signed out: the login page offers the passkey in the username field's autofill
      // (conditional mediation), which the virtual authenticator answers at once: signed
      // in without typing a username.
      const login = `${tessera}/v1/login?return_to=${encodeURIComponent(account)}`;
      await page.goto(login);
      await page.waitForURL(account);
      expect(await fetchInPage(page, `${tessera}/v1/whoami`)).toMatchObject({
        status: 200,
        body: { authenticated_via: 'passkey', identity: { username: 'alice' } },
      });
      expect((await fetchInPage(page, `${tessera}/v1/logout`, 'POST')).status).toBe(204);

      // A browser without autofill for passkeys: the button.
      await context.addInitScript(
        'PublicKeyCredential.isConditionalMediationAvailable = async () => false;',
      );
      await page.goto(login);
      expect(await page.getByLabel('Username').getAttribute('autocomplete')).toBe(
        'username webauthn',
      );
      await page.screenshot({ path: `${SCREENSHOTS}/login-page-passkey.png`, fullPage: true });
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await page.waitForURL(account);
      const who = await fetchInPage(page, `${tessera}/v1/whoami`);
      expect(who).toMatchObject({
        status: 200,
        body: { authenticated_via: 'passkey', identity: { username: 'alice' } },
      });
      // The list now shows when it was last used.
      await expect
        .poll(() => page.locator('ul.passkeys').textContent())
        .not.toContain('last used never');
      const stored = await t.deps.store.listPasskeys(
        (who.body as { identity: { id: string } }).identity.id,
      );
      expect(stored).toHaveLength(1);
      expect(stored[0]!.last_used_at).not.toBeNull();
      expect(violations).toEqual([]);
      await context.close();
    });

    it('without JavaScript the page lists passkeys and says they need JavaScript', async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await page.goto(
        `${tessera}/v1/login?return_to=${encodeURIComponent(`${tessera}/v1/account/passkeys`)}`,
      );
      expect(await page.getByRole('button', { name: 'Use a passkey' }).isHidden()).toBe(true);
      await page.getByLabel('Username').fill('alice');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${tessera}/v1/account/passkeys`);
      expect(await page.locator('#needs-js').textContent()).toBe(
        'Adding, renaming and removing passkeys needs JavaScript.',
      );
      expect(await page.locator('.passkey-name').allTextContents()).toEqual(['Test laptop']);
      await context.close();
    });
  });
}
