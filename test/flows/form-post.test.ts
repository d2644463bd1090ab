import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  APP_ORIGIN,
  BROWSER_ACCEPT,
  FORM,
  type FlowTestApp,
  PASSWORD,
  createFlowApp,
  flowRow,
  formPost,
  sessionTokenOf,
} from './helpers.js';

/** A hosted page: HTML with the security headers, never a JSON document. */
function expectPage(res: LightMyRequestResponse, status: number): void {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  const csp = String(res.headers['content-security-policy']);
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  // Scripts only from Tessera itself (the login page's passkey script), never inline.
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|script-src (?!'self';)/);
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('same-origin');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body.startsWith('<!doctype html>')).toBe(true);
}

/** The hidden CSRF field of a rendered form, or undefined when the page has no form. */
function csrfIn(html: string): string | undefined {
  return /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
}

describeEachDatabase('hosted login page and form posts', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_FLOW_MAX_ATTEMPTS: '2',
      SERVICE_RATE_LIMIT_LOGIN_IP: '6/60s',
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
    });
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  async function pageFor(returnTo?: string) {
    const query = returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : '';
    const res = await t.inject({
      method: 'GET',
      url: `/v1/login${query}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expectPage(res, 200);
    const action = /<form method="post" action="\/v1\/flows\/([^/"]+)\/password">/.exec(res.body);
    return { res, id: action![1]!, csrf: csrfIn(res.body)! };
  }

  it('renders an accessible, self-contained page bound to a new flow', async () => {
    const { res, id, csrf } = await pageFor(`${APP_ORIGIN}/home`);
    const row = await flowRow(t, id);
    expect(row.csrf_token).toBe(csrf);
    expect(row.return_to).toBe(`${APP_ORIGIN}/home`);
    const html = res.body;
    expect(html).toContain('<html lang="en">');
    expect(html).toMatch(/<title>Sign in · Tessera<\/title>/);
    expect(html).toContain('<label for="username">Username</label>');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toMatch(
      /<input id="username" name="username"[^>]*autocomplete="username webauthn"/,
    );
    expect(html).toMatch(/<input id="password" name="password" type="password"/);
    // No inline script, no external resource of any kind: the only scripts are Tessera's own.
    const own = html.replace(/<script src="\/v1\/assets\/[a-z-]+\.js\?v=[\w-]+"><\/script>/g, '');
    expect(own).not.toMatch(/<script|<link|<img|<iframe|src=|url\(|@import/i);
    expect(html).toContain('app.example');
    expect(Buffer.byteLength(html)).toBeLessThan(8 * 1024);
    // form-action allows the landing origin, since the 303 after the post goes there.
    expect(res.headers['content-security-policy']).toMatch(
      /form-action 'self' https:\/\/app\.example;/,
    );
  });

  it('success with return_to: 303 to it, with the session cookie', async () => {
    const { id, csrf } = await pageFor(`${APP_ORIGIN}/home?x=1`);
    const res = await formPost(t, id, { csrf_token: csrf, username: 'alice', password: PASSWORD });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${APP_ORIGIN}/home?x=1`);
    expect(sessionTokenOf(res)).toMatch(/^tess_s_/);
    expect(res.headers['set-cookie']).toMatch(/HttpOnly; Secure; SameSite=Lax$/);
  });

  it('success without return_to: a small signed-in page, with the cookie', async () => {
    const { id, csrf } = await pageFor();
    const res = await formPost(t, id, { csrf_token: csrf, username: 'alice', password: PASSWORD });
    expectPage(res, 200);
    expect(res.body).toContain('Signed in');
    expect(res.body).toContain('Alice Example');
    expect(sessionTokenOf(res)).toMatch(/^tess_s_/);
  });

  it('wrong password: the form again with the error, the username kept, same flow', async () => {
    const { id, csrf } = await pageFor(`${APP_ORIGIN}/home`);
    const res = await formPost(t, id, { csrf_token: csrf, username: 'alice', password: 'nope' });
    expectPage(res, 401);
    expect(res.body).toContain('role="alert"');
    expect(res.body).toContain('The username or password is incorrect.');
    expect(res.body).toMatch(/id="username"[^>]*value="alice"/);
    expect(res.body).toContain('aria-invalid="true"');
    expect(csrfIn(res.body)).toBe(csrf);
    expect(res.headers['set-cookie']).toBeUndefined();
    // The re-rendered form still works.
    const ok = await formPost(t, id, { csrf_token: csrf, username: 'alice', password: PASSWORD });
    expect(ok.statusCode).toBe(303);
  });

  it('escapes what the user typed', async () => {
    const { id, csrf } = await pageFor();
    const res = await formPost(t, id, {
      csrf_token: csrf,
      username: '"><script>alert(1)</script>',
      password: 'x',
    });
    expectPage(res, 401);
    expect(res.body).not.toContain('<script>');
    expect(res.body).toContain('&quot;&gt;&lt;script&gt;');
  });

  it('missing fields: the form again asking for both', async () => {
    const { id, csrf } = await pageFor();
    const res = await formPost(t, id, { csrf_token: csrf, username: 'alice' });
    expectPage(res, 422);
    expect(res.body).toContain('Enter your username and password.');
    expect(csrfIn(res.body)).toBe(csrf);
  });

  it('a wrong CSRF token: a dead end that does not reveal the flow token', async () => {
    const { id, csrf } = await pageFor();
    const res = await formPost(t, id, { csrf_token: 'forged', username: 'alice', password: 'x' });
    expectPage(res, 401);
    expect(res.body).not.toContain(csrf);
    expect(csrfIn(res.body)).toBeUndefined();
    expect(res.body).toContain('href="/v1/login"');
  });

  it('a used flow: says so, with a way to start again that keeps return_to', async () => {
    const { id, csrf } = await pageFor(`${APP_ORIGIN}/home`);
    await formPost(t, id, { csrf_token: csrf, username: 'alice', password: PASSWORD });
    const res = await formPost(t, id, { csrf_token: csrf, username: 'alice', password: PASSWORD });
    expectPage(res, 401);
    expect(res.body).toContain('already been used');
    expect(res.body).toContain(
      `href="/v1/login?return_to=${encodeURIComponent(`${APP_ORIGIN}/home`)}"`,
    );
  });

  it('the attempt cap and expiry end the form', async () => {
    const capped = await pageFor();
    for (const password of ['a', 'b']) {
      await formPost(t, capped.id, { csrf_token: capped.csrf, username: 'alice', password });
    }
    const res = await formPost(t, capped.id, {
      csrf_token: capped.csrf,
      username: 'alice',
      password: PASSWORD,
    });
    expectPage(res, 401);
    expect(res.body).toContain('Too many failed attempts');

    const old = await pageFor();
    t.clock.advance(15 * 60_000);
    const late = await formPost(t, old.id, {
      csrf_token: old.csrf,
      username: 'alice',
      password: PASSWORD,
    });
    expectPage(late, 401);
    expect(late.body).toContain('expired');
  });

  it('rate limited: the form again with the wait, and Retry-After', async () => {
    const { id, csrf } = await pageFor();
    let last: LightMyRequestResponse | undefined;
    for (let i = 0; i < 7; i += 1) {
      const other = await pageFor();
      last = await formPost(t, other.id, {
        csrf_token: other.csrf,
        username: `u${i}x`,
        password: 'x',
      });
    }
    expectPage(last!, 429);
    const res = await formPost(t, id, { csrf_token: csrf, username: 'alice', password: PASSWORD });
    expectPage(res, 429);
    expect(res.body).toMatch(/Try again in \d+ seconds/);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(csrfIn(res.body)).toBe(csrf);
  });

  it('a post from another site: 403 page, no form, flow untouched', async () => {
    const { id, csrf } = await pageFor();
    const res = await formPost(
      t,
      id,
      { csrf_token: csrf, username: 'alice', password: PASSWORD },
      { origin: 'https://evil.example' },
    );
    expectPage(res, 403);
    expect(res.body).toContain('another site');
    expect(csrfIn(res.body)).toBeUndefined();
    expect(await flowRow(t, id)).toMatchObject({ state: 'created', failed_attempts: 0 });
  });

  it('unknown flow, unreadable bodies and other form encodings still get pages', async () => {
    const unknown = await formPost(t, `tess_f_${'C'.repeat(43)}`, { csrf_token: 'x' });
    expectPage(unknown, 404);
    const { id } = await pageFor();
    for (const [type, payload] of [
      ['multipart/form-data; boundary=x', '--x\r\n'],
      ['text/plain', 'username=alice'],
      [FORM, 'username=a&username=b'],
      [FORM, 'x'.repeat(70 * 1024)],
    ] as const) {
      const res = await t.inject({
        method: 'POST',
        url: `/v1/flows/${id}/password`,
        headers: { 'content-type': type, accept: BROWSER_ACCEPT },
        payload,
      });
      expectPage(res, 422);
    }
  });
});
