import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LoginUiSite, startLoginUiSite } from '../browser/login-ui-site.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  browserClientBundle,
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { PASSWORD } from '../helpers/core.js';
import { type FakeIssuer, startFakeIssuer } from '../providers/fake-upstreams.js';
import { providersFile } from '../providers/helpers.js';

/**
 * An operator's own sign-up UI on its own origin (same site, as docs/browser-sign-in.md
 * asks), driving Tessera's registration flow with the browser client: the browser applies
 * CORS and the cookie rules itself.
 */
describeInChromium('the browser client in an operator’s own sign-up UI', () => {
  let t: TestApp;
  let ui: LoginUiSite;
  let issuer: FakeIssuer;
  let tessera: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ui = await startLoginUiSite();
    issuer = await startFakeIssuer();
    t = await createTestApp('sqlite', {
      SERVICE_LOGIN_UI_URL: `${ui.origin}/signin`,
      SERVICE_RETURN_TO_ALLOWED: ui.origin,
      SERVICE_SESSION_CORS_ORIGINS: ui.origin,
      SERVICE_REGISTRATION: 'open',
      SERVICE_REGISTRATION_EMAIL: 'optional',
      SERVICE_PROVIDERS_FILE: providersFile([
        {
          id: 'corp',
          type: 'oidc',
          issuer: issuer.issuer,
          client_id: issuer.clientId,
          client_secret_env: 'CORP_SECRET',
        },
      ]),
      CORP_SECRET: issuer.secret,
    });
    tessera = await listenForBrowser(t);
    ui.tessera = tessera;
    browser = await sharedChromium();
    page = await browser.newPage();
    await page.goto(`${ui.origin}/done`);
    await page.addScriptTag({ content: await browserClientBundle() });
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await t?.close();
    await issuer?.close();
    await ui?.close();
  });

  it('signs up with a password (the cookie set), then sees itself in whoami', async () => {
    const result = await page.evaluate(
      async ([baseUrl, returnTo, password]) => {
        const { createBrowserClient } = (
          globalThis as unknown as { TesseraBrowser: typeof import('@tessera/client/browser') }
        ).TesseraBrowser;
        const client = createBrowserClient({ baseUrl: baseUrl! });
        const flow = await client.startRegistration({ returnTo });
        const done = await client.submitRegistrationPassword(flow.id, {
          username: 'from-ui',
          password: password!,
          csrf_token: flow.csrf_token,
        });
        const me = await client.whoami();
        return {
          identity: done.identity.username,
          returnTo: done.return_to,
          session: done.session?.authenticated_via,
          whoami: me.identity.username,
        };
      },
      [tessera, `${ui.origin}/welcome`, PASSWORD] as const,
    );
    expect(result).toEqual({
      identity: 'from-ui',
      returnTo: `${ui.origin}/welcome`,
      session: 'password',
      whoami: 'from-ui',
    });
  });

  it('answers the provider’s URL for a sign-up with a provider, and refuses a wrong token', async () => {
    const result = await page.evaluate(async (baseUrl) => {
      const { createBrowserClient, isTesseraError } = (
        globalThis as unknown as { TesseraBrowser: typeof import('@tessera/client/browser') }
      ).TesseraBrowser;
      const client = createBrowserClient({ baseUrl });
      const flow = await client.startRegistration();
      const refused = await client
        .startRegistrationProvider(flow.id, { provider: 'corp', csrf_token: 'wrong' })
        .then(
          () => 'accepted',
          (error: unknown) => (isTesseraError(error) ? error.code : String(error)),
        );
      const started = await client.startRegistrationProvider(flow.id, {
        provider: 'corp',
        csrf_token: flow.csrf_token,
      });
      return { refused, redirectTo: started.redirect_to };
    }, tessera);
    expect(result.refused).toBe('invalid_token');
    const target = new URL(result.redirectTo);
    expect(target.origin).toBe(new URL(issuer.issuer).origin);
    expect(target.searchParams.get('client_id')).toBe(issuer.clientId);
    expect(target.searchParams.get('code_challenge_method')).toBe('S256');
  });
});
