import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { PASSWORD } from '../helpers/core.js';
import { auditEntries } from '../helpers/core.js';
import {
  addAlice,
  describeInChromium,
  sharedChromium,
  releaseChromium,
  TabPool,
  listenForBrowser,
} from '../helpers/chromium.js';
import { type LoginUiSite, startLoginUiSite } from './login-ui-site.js';
import { type AppSite, startAppSite } from './pages.js';

/** Runs `fetch` inside the page, so the browser applies CORS and cookie rules itself. */
function fetchFrom(page: Page, url: string, init: { method?: string; json?: unknown } = {}) {
  return page.evaluate(
    async ([target, method, json]) => {
      try {
        const res = await fetch(target!, {
          method: method ?? 'GET',
          credentials: 'include',
          ...(json === undefined
            ? {}
            : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) }),
        });
        const text = await res.text();
        return { status: res.status, body: text ? JSON.parse(text) : null };
      } catch (error) {
        return { failed: (error as Error).name };
      }
    },
    [url, init.method, init.json] as const,
  );
}

/** A classic form post from the page's origin: a navigation, so no preflight and no CORS. */
async function formPostFrom(page: Page, url: string, fields: Record<string, string>) {
  const attr = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;');
  const inputs = Object.entries(fields)
    .map(([key, value]) => `<input type="hidden" name="${attr(key)}" value="${attr(value)}">`)
    .join('');
  // setContent rewrites the current document: the form's origin is still the page's.
  await page.setContent(
    `<form method="post" action="${attr(url)}">${inputs}<button>Send</button></form>`,
  );
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForURL(url);
}

/**
 * Issue 11 item 7. Tessera, the operator's UI and a third site listen on three ports of
 * 127.0.0.1: three origins, one site, as Tessera and a login UI on sibling subdomains are
 * (the cookies involved are SameSite=Lax, so the UI must be same-site, see the docs).
 */
describeInChromium('external login UI in a real browser', () => {
  let t: TestApp;
  let ui: LoginUiSite;
  let elsewhere: AppSite;
  let tessera: string;
  let browser: Browser;
  let tabs: TabPool;

  beforeAll(async () => {
    ui = await startLoginUiSite();
    elsewhere = await startAppSite('Elsewhere');
    t = await createTestApp('sqlite', {
      SERVICE_LOGIN_UI_URL: `${ui.origin}/signin`,
      SERVICE_RETURN_TO_ALLOWED: ui.origin,
    });
    await addAlice(t);
    tessera = await listenForBrowser(t);
    ui.tessera = tessera;
    browser = await sharedChromium();
    tabs = new TabPool(browser);
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await t?.close();
    await ui?.close();
    await elsewhere?.close();
  });

  /** Navigates to /v1/login and follows the 303 to the UI; returns the flow id. */
  async function arriveAtUi(page: Page): Promise<string> {
    const returnTo = `${ui.origin}/done`;
    await page.goto(`${tessera}/v1/login?return_to=${encodeURIComponent(returnTo)}`);
    await page.waitForURL((url) => url.origin === ui.origin && url.pathname === '/signin');
    const id = new URL(page.url()).searchParams.get('flow')!;
    expect(id).toMatch(/^tess_f_/);
    return id;
  }

  async function signInThroughUi(page: Page) {
    await expectStatus(page, 'ready');
    await page.getByLabel('Username').fill('alice');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${ui.origin}/done`);
  }

  async function expectStatus(page: Page, text: string) {
    await page.locator('#status').filter({ hasText: text }).waitFor();
  }

  it('redirect mode end to end: /v1/login, 303 to the UI with ?flow=, the UI signs the browser in', async () => {
    const { context, page, close } = await tabs.open();
    const id = await arriveAtUi(page);

    // The 303 bound the flow to this browser: a cookie only the flow's own URLs receive.
    const binding = (await context.cookies(`${tessera}/v1/flows/${id}`)).find(
      (cookie) => cookie.name === 'service_flow',
    );
    expect(binding).toMatchObject({
      path: `/v1/flows/${id}`,
      httpOnly: true,
      secure: true,
      sameSite: 'Lax',
    });

    await signInThroughUi(page);
    expect(await page.locator('h1').textContent()).toBe('Signed in');

    // Signed in: the session cookie is in the browser and whoami answers with it.
    const who = await fetchFrom(page, `${tessera}/v1/whoami`);
    expect(who).toMatchObject({ status: 200, body: { identity: { username: 'alice' } } });
    const cookies = await context.cookies(`${tessera}/v1/flows/${id}`);
    expect(cookies.map((cookie) => cookie.name)).toEqual(['service_session']);

    const rows = (await auditEntries(t)).filter((row) => row.details.flow_id === id);
    expect(rows).toMatchObject([
      { action: 'login', outcome: 'ok', details: { username: 'alice', address: '127.0.0.1' } },
    ]);
    await close();
  });

  it('a page on a third origin cannot read the token nor complete the flow, even knowing it', async () => {
    const { context, page: uiPage, close } = await tabs.open();
    const id = await arriveAtUi(uiPage);
    await expectStatus(uiPage, 'ready');

    // The same browser, so the binding cookie goes along: the third origin still reads
    // nothing (no CORS for it) and its JSON post never leaves the preflight.
    const page = await context.newPage();
    await page.goto(`${elsewhere.origin}/`);
    expect(await fetchFrom(page, `${tessera}/v1/flows/${id}`)).toEqual({ failed: 'TypeError' });
    const json = { username: 'alice', password: PASSWORD, csrf_token: 'guess' };
    expect(
      await fetchFrom(page, `${tessera}/v1/flows/${id}/password`, { method: 'POST', json }),
    ).toEqual({ failed: 'TypeError' });

    // Suppose the token leaked anyway: a form post (no preflight) from the third origin is
    // refused by the login-CSRF check, and the browser gets no session.
    const leaked = (await t.deps.store.findFlow(id))!.csrf_token;
    const submitUrl = `${tessera}/v1/flows/${id}/password`;
    const refused = page.waitForResponse(submitUrl);
    await formPostFrom(page, submitUrl, {
      username: 'alice',
      password: PASSWORD,
      csrf_token: leaked,
    });
    expect((await refused).status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('Request refused');
    expect((await context.cookies(tessera)).map((cookie) => cookie.name)).not.toContain(
      'service_session',
    );
    expect(await t.deps.store.findFlow(id)).toMatchObject({ state: 'created', failed_attempts: 0 });

    // The flow is intact: the operator's UI, in its own tab, still completes it.
    await signInThroughUi(uiPage);
    expect(await fetchFrom(uiPage, `${tessera}/v1/whoami`)).toMatchObject({ status: 200 });

    const outcomes = (await auditEntries(t))
      .filter((row) => row.details.flow_id === id)
      .map((row) => row.outcome);
    expect(outcomes).toEqual(['forbidden', 'ok']);
    await close();
  });

  it('the UI manages passkeys and TOTP through the account zone; a third origin cannot', async () => {
    const { context, page: uiPage, close } = await tabs.open();
    await arriveAtUi(uiPage);
    await signInThroughUi(uiPage);

    /** A credentialed fetch with the CSRF header, as an account UI's script makes it. */
    const call = (page: Page, url: string, method = 'GET', csrf?: string) =>
      page.evaluate(
        async ([target, verb, token]) => {
          try {
            const res = await fetch(target!, {
              method: verb,
              credentials: 'include',
              headers: {
                'content-type': 'application/json',
                ...(token ? { 'x-csrf-token': token } : {}),
              },
              ...(verb === 'GET' ? {} : { body: '{}' }),
            });
            return {
              status: res.status,
              csrf: res.headers.get('x-csrf-token'),
              body: await res.json(),
            };
          } catch (error) {
            return { failed: (error as Error).name };
          }
        },
        [url, method, csrf] as const,
      );

    // The list's CSRF token is in a response header, readable because it is exposed.
    const list = await call(uiPage, `${tessera}/v1/account/passkeys`);
    expect(list).toMatchObject({ status: 200, body: [] });
    const csrf = (list as { csrf: string }).csrf;
    expect(csrf).toBeTruthy();
    // X-CSRF-Token makes these preflighted: the browser sends them only after a 204.
    const options = await call(uiPage, `${tessera}/v1/account/passkeys/options`, 'POST', csrf);
    expect(options).toMatchObject({
      status: 200,
      body: { options: { challenge: expect.any(String) } },
    });
    const started = await call(uiPage, `${tessera}/v1/account/two-factor/totp`, 'POST', csrf);
    expect(started).toMatchObject({ status: 200, body: { secret: expect.any(String) } });
    const off = await call(uiPage, `${tessera}/v1/account/two-factor/disable`, 'POST', csrf);
    expect(off).toMatchObject({ status: 200, body: { enabled: false, pending: false } });

    // The same browser, on a third origin: nothing readable, and no change gets through.
    const page = await context.newPage();
    await page.goto(`${elsewhere.origin}/`);
    expect(await call(page, `${tessera}/v1/account/two-factor`)).toEqual({ failed: 'TypeError' });
    expect(await call(page, `${tessera}/v1/account/two-factor/totp`, 'POST', csrf)).toEqual({
      failed: 'TypeError',
    });
    const status = await call(uiPage, `${tessera}/v1/account/two-factor`);
    expect(status).toMatchObject({ status: 200, body: { enabled: false, pending: false } });
    await close();
  });

  it('another browser that learns the flow id gets no token from GET /v1/flows/{id}', async () => {
    const victim = await tabs.open();
    const id = await arriveAtUi(victim.page);
    const { page, close: closeOther } = await tabs.open();
    await page.goto(`${ui.origin}/signin?flow=${encodeURIComponent(id)}`);
    await expectStatus(page, 'no token');
    await victim.close();
    await closeOther();
  });
});
