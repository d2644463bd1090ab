import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserTab,
  describeInChromium,
  sharedChromium,
  releaseChromium,
  TabPool,
} from '../helpers/chromium.js';
import { postgresAvailable, type DatabaseKind } from '../helpers/databases.js';
import { addUser, PASSWORD, startOidcApp, type OidcApp } from './helpers.js';

interface ForeignSite {
  /** On `localhost`, while Tessera is on 127.0.0.1: another site, not only another origin. */
  origin: string;
  close(): Promise<void>;
}

/** A page elsewhere: `/` links to `href`; `/post` auto-submits `fields` to `action`. */
async function startForeignSite(
  href: string,
  action: string,
  fields: Record<string, string>,
): Promise<ForeignSite> {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
    .join('');
  const server: Server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      request.url === '/post'
        ? `<!doctype html><title>Win a prize</title><form method="post" action="${action}">${inputs}</form><script>document.forms[0].submit()</script>`
        : `<!doctype html><title>Elsewhere</title><a href="${href}">Read more</a>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * RP-initiated logout always asks (docs/oidc.md, "RP-initiated logout"): a page elsewhere
 * sending the browser to `<issuer>/session/end` gets a question, and the Tessera session
 * ends only when the user clicks its button. In Chromium, with a browser that signed in
 * to Tessera directly (so no OIDC session) and one that has one too.
 */
function logoutSuite(kind: DatabaseKind) {
  let t: OidcApp;
  let site: ForeignSite;
  let browser: Browser;
  let tabs: TabPool;

  beforeAll(async () => {
    t = await startOidcApp(kind);
    await addUser(t);
    site = await startForeignSite(`${t.issuer}/session/end`, `${t.issuer}/session/end/confirm`, {
      logout: 'yes',
      xsrf: 'guessed',
    });
    browser = await sharedChromium();
    tabs = new TabPool(browser);
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await site?.close();
    await t?.close();
  });

  /** A browser signed in on Tessera's hosted login page: its session cookie's value. */
  async function signedInBrowser(): Promise<BrowserTab> {
    const tab = await tabs.open();
    const { context, page } = tab;
    // Under the test's own timeout, so a page that never asks fails with its locator named.
    page.setDefaultTimeout(10_000);
    await page.goto(`${t.origin}/v1/login`);
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => sessionCookie(context)).toBeTruthy();
    return tab;
  }

  async function sessionCookie(context: BrowserContext): Promise<string | undefined> {
    const cookies = await context.cookies(t.origin);
    return cookies.find((cookie) => cookie.name === 'service_session')?.value;
  }

  /** Whether Tessera still knows the session (asked over HTTP, not through the browser). */
  async function alive(token: string): Promise<boolean> {
    const response = await fetch(`${t.origin}/v1/whoami`, {
      headers: { cookie: `service_session=${token}` },
    });
    return response.status === 200;
  }

  it('asks before ending the Tessera session a page elsewhere sent the browser to end', async () => {
    const { context, page, close } = await signedInBrowser();
    const token = (await sessionCookie(context))!;

    await page.goto(site.origin);
    await page.getByRole('link', { name: 'Read more' }).click();
    await page.waitForURL(`${t.issuer}/session/end`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // A question and a button, nothing that answers it for the user.
    expect(await page.title()).toBe('Sign out · Tessera');
    expect(await page.locator('h1').textContent()).toBe('Sign out?');
    expect(await page.locator('script').count()).toBe(0);
    expect(await alive(token)).toBe(true);
    expect(await sessionCookie(context)).toBe(token);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${t.issuer}/session/end/success`);
    expect(await page.title()).toBe('Signed out · Tessera');
    expect(await alive(token)).toBe(false);
    expect(await sessionCookie(context)).toBeUndefined();
    await close();
  });

  // Another site (localhost: the provider's SameSite=Lax cookie stays home, so it has no
  // question to answer), and another origin of the same site (127.0.0.1 on another port:
  // the cookie goes along, the guessed secret does not match).
  it.each([
    ['another site', 'localhost', 'could not find logout details'],
    ['another origin of the same site', '127.0.0.1', 'xsrf token invalid'],
  ])('refuses a confirmation posted from %s', async (_, hostname, reason) => {
    const { context, page, close } = await signedInBrowser();
    const token = (await sessionCookie(context))!;
    // The question was asked (so the provider holds a secret for it), then a page
    // elsewhere posts its own answer, without the secret.
    await page.goto(`${t.issuer}/session/end`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    const attacker = new URL(site.origin);
    attacker.hostname = hostname;
    await page.goto(`${attacker.origin}/post`);
    await page.waitForURL(`${t.issuer}/session/end/confirm`);
    expect(await page.title()).toBe('Sign-out could not continue · Tessera');
    expect(await page.getByRole('alert').textContent()).toBe(reason);
    expect(await alive(token)).toBe(true);
    expect(await sessionCookie(context)).toBe(token);
    await close();
  });
}

describeInChromium('OpenID Connect logout confirmation in a real browser', () => {
  describe('[sqlite]', () => logoutSuite('sqlite'));
  if (postgresAvailable) describe('[postgres]', () => logoutSuite('postgres'));
  else describe.skip('[postgres] (skipped: SERVICE_TEST_DATABASE_URL not set)', () => undefined);
});
