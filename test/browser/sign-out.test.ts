import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/lib/tokens.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  TabPool,
} from '../helpers/chromium.js';
import { addClient, addUser, type OidcApp, PASSWORD, startOidcApp } from '../oidc/helpers.js';
import { relyingParty, startAuthorization } from '../oidc/relying-party.js';
import { type AppSite, startAppSite } from './pages.js';

const SCREENSHOTS = 'test-results';

/**
 * Issue 22, item 11: every hosted page a signed-in user sees has a Sign out that works,
 * with JavaScript off (a plain form) and on (no CSP violation): the session is revoked in
 * the database, whoami answers 401, and the browser lands on the "Signed out" page.
 */
describeInChromium('Sign out on every hosted page', () => {
  let t: OidcApp;
  let site: AppSite;
  let browser: Browser;
  let tabs: TabPool;
  let thirdParty: { clientId: string; callback: string };

  beforeAll(async () => {
    // Twelve sign-ins as alice: more than the per-username limit allows in 15 minutes.
    t = await startOidcApp('sqlite', { env: LOOSE_SIGN_IN_LIMITS });
    await addUser(t);
    site = await startAppSite('App');
    const callback = `${site.origin}/callback`;
    const { client } = await addClient(t, {
      name: 'Wiki by Someone',
      redirectUris: [callback],
      public: true,
    });
    thirdParty = { clientId: client.client_id, callback };
    browser = await sharedChromium();
    tabs = new TabPool(browser);
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await site?.close();
    await t?.close();
  });

  async function signIn(page: Page): Promise<void> {
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  /** Each page, reached signed in; `name` is also its screenshot's. */
  const pages: { name: string; title: string; open: (page: Page) => Promise<void> }[] = [
    {
      name: 'signed-in',
      title: 'Signed in · Tessera',
      open: async (page) => {
        await page.goto(`${t.origin}/v1/login`);
        await signIn(page);
        await page.waitForURL(/\/password$/);
      },
    },
    {
      name: 'login-already-signed-in',
      title: 'Sign in · Tessera',
      open: async (page) => {
        await page.goto(`${t.origin}/v1/login`);
        await signIn(page);
        await page.waitForURL(/\/password$/);
        await page.goto(`${t.origin}/v1/login`);
        expect(await page.locator('#signed-in-as').textContent()).toContain(
          'You are signed in as Alice Example (alice).',
        );
      },
    },
    ...[
      ['account', '/v1/account', 'Your account · Tessera'],
      ['passkeys', '/v1/account/passkeys', 'Passkeys · Tessera'],
      ['two-factor', '/v1/account/two-factor', 'Two-step verification · Tessera'],
    ].map(([name, path, title]) => ({
      name: name!,
      title: title!,
      open: async (page: Page) => {
        // Signed out, the page sends the browser through the hosted login and back.
        await page.goto(`${t.origin}/v1/account`);
        await signIn(page);
        await page.waitForURL(`${t.origin}/v1/account`);
        await page.goto(`${t.origin}${path}`);
      },
    })),
    {
      name: 'oidc-consent',
      title: 'Allow access · Tessera',
      open: async (page) => {
        const config = await relyingParty(t.issuer, thirdParty.clientId, null);
        const auth = await startAuthorization(config, thirdParty.callback, 'openid profile');
        await page.goto(auth.url.href);
        await signIn(page);
        await page.getByRole('button', { name: 'Allow' }).waitFor();
      },
    },
  ];

  it('answers the page only when the form asks for it: every other logout keeps its 204', async () => {
    const FORM = 'application/x-www-form-urlencoded';
    const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const logout = (url: string, headers: Record<string, string>) =>
      t.app.inject({ method: 'POST', url, headers, payload: '' });
    const plain: Record<string, string>[] = [
      {},
      { 'content-type': FORM },
      { 'content-type': FORM, accept: HTML },
    ];
    for (const headers of plain) {
      const res = await logout('/v1/logout', headers);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
    }
    const page = await logout('/v1/logout?page=signed-out', { 'content-type': FORM, accept: HTML });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['set-cookie']).toMatch(/^service_session=; Max-Age=0;/);
    // The "Signed out" page runs nothing: no script-src in its policy.
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src /);
    expect(page.headers['content-security-policy']).not.toContain('script-src');
    expect(page.body).toContain('<h1>Signed out</h1>');
    // Another site's form is still refused before anything happens.
    const foreign = await logout('/v1/logout?page=signed-out', {
      'content-type': FORM,
      accept: HTML,
      origin: site.origin,
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toEqual({ error: 'forbidden' });
  });

  // Every page with JavaScript off (the form needs none); with it on, only the pages whose
  // features are scripts (the login page's passkey button, the passkeys page), where a
  // script could get in the form's way. On the others JavaScript changes nothing.
  const withScripts = new Set(['login-already-signed-in', 'passkeys']);
  describe.each([false, true])('JavaScript on: %s', (javaScriptEnabled) => {
    const reached = javaScriptEnabled ? pages.filter((p) => withScripts.has(p.name)) : pages;
    it.each(reached)('$name', async ({ name, title, open }) => {
      const { context, page, close } = await tabs.open({ javaScriptEnabled });
      context.setDefaultTimeout(5_000);
      const violations: string[] = [];
      context.on('console', (message) => {
        if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
      });
      await open(page);
      expect(await page.title()).toBe(title);
      const whoami = () => context.request.get(`${t.origin}/v1/whoami`);
      expect((await whoami()).status()).toBe(200);
      const token = (await context.cookies(t.origin)).find(
        (cookie) => cookie.name === 'service_session',
      )!.value;
      if (!javaScriptEnabled) {
        await page.screenshot({ path: `${SCREENSHOTS}/sign-out-${name}.png`, fullPage: true });
      }

      const signOut = page.getByRole('button', { name: 'Sign out' });
      expect(await signOut.count()).toBe(1);
      await signOut.click();
      await page.waitForURL(`${t.origin}/v1/logout?page=signed-out`);
      expect(await page.title()).toBe('Signed out · Tessera');
      expect(await page.locator('h1').textContent()).toBe('Signed out');
      if (name === 'signed-in' && !javaScriptEnabled) {
        await page.screenshot({ path: `${SCREENSHOTS}/signed-out.png`, fullPage: true });
      }

      expect((await whoami()).status()).toBe(401);
      expect((await context.cookies(t.origin)).map((cookie) => cookie.name)).not.toContain(
        'service_session',
      );
      // Revoked in the database, not merely forgotten by the browser.
      const stored = await t.deps.store.findSessionByTokenHash(hashToken(token));
      expect(stored?.session.revoked_at).not.toBeNull();

      // "Sign in again" leads to a fresh sign-in form, no longer saying who is signed in.
      await page.getByRole('link', { name: 'Sign in again' }).click();
      await page.waitForURL(/\/v1\/login$/);
      expect(await page.title()).toBe('Sign in · Tessera');
      expect(await page.locator('#signed-in-as').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
      expect(violations).toEqual([]);
      await close();
    });
  });
});
