import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  CSRF_REFUSAL,
  RECENT_SIGN_IN_REFUSAL,
  auditEntries,
  auditSince,
  expectError,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  BROWSER_ACCEPT,
  type BrowserSession,
  FIREFOX,
  FORM,
  NEW_PASSWORD,
  PASSWORD,
  addUser,
  asUser,
  browserSignIn,
  csrfOf,
  passwordWorks,
  whoamiStatus,
} from './helpers.js';

const UI = 'https://login.example';
const FOREIGN = 'https://evil.example';
const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';
const WINDOW = 15 * 60_000;

/** Issue 14 items 1 and 2: the account JSON API, its CSRF and Origin checks, and recovery. */
describeEachDatabase('account JSON API', (kind) => {
  let t: TestApp;
  let directAuth: string;
  beforeAll(async () => {
    t = await createTestApp(kind, {
      SERVICE_LOGIN_UI_URL: `${UI}/login`,
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '1000/1m',
    });
    directAuth = await t.token('direct_auth');
  });
  afterAll(() => t?.close());

  async function signedIn(userAgent = FIREFOX) {
    const user = await addUser(t);
    const session = await browserSignIn(t, user.username, { userAgent });
    return { user, session, csrf: await csrfOf(t, session) };
  }

  /** Every state-changing request of the API, for the checks they all share. */
  const writes = (other: string) =>
    [
      { method: 'PATCH', url: '/v1/account/profile', payload: { display_name: 'X' } },
      { method: 'POST', url: '/v1/account/profile', payload: { display_name: 'X' } },
      { method: 'POST', url: '/v1/account/password', payload: { new_password: NEW_PASSWORD } },
      { method: 'DELETE', url: `/v1/account/sessions/${other}` },
      { method: 'POST', url: `/v1/account/sessions/${other}/revoke` },
      { method: 'POST', url: '/v1/account/sessions/revoke-others' },
    ] as const;

  describe('who may call', () => {
    it('401 when not signed in, for reads and writes alike', async () => {
      for (const url of ['/v1/account/profile', '/v1/account/sessions']) {
        expectError(await asUser(t, null, { method: 'GET', url }), 401, 'invalid_token');
      }
      for (const request of writes(UNKNOWN_ID)) {
        expectError(await asUser(t, null, { ...request }), 401, 'invalid_token');
      }
      const { session } = await signedIn();
      const revoke = await t.token('revoke');
      await t.call('POST', '/v1/sessions/revoke', revoke, { session_id: session.id });
      expectError(
        await asUser(t, session, { method: 'GET', url: '/v1/account/profile' }),
        401,
        'invalid_token',
      );
    });

    it('403 without the CSRF token, with a wrong one, or with another session’s', async () => {
      const { user, session, csrf } = await signedIn();
      const other = await signedIn();
      const before = await t.deps.store.findIdentityById(user.id);
      for (const request of writes(other.session.id)) {
        const refused = [
          await asUser(t, session, { ...request }),
          await asUser(t, session, { ...request, csrf: `${csrf.slice(0, -2)}xx` }),
          await asUser(t, session, { ...request, csrf: other.csrf }),
        ];
        for (const res of refused) expectError(res, 403, 'forbidden', CSRF_REFUSAL);
      }
      // Nothing changed: same profile, same password, every session alive.
      expect(await t.deps.store.findIdentityById(user.id)).toEqual(before);
      expect(await whoamiStatus(t, other.session)).toBe(200);
    });

    it('403 from a foreign Origin even with the right token; the login UI and our own origin pass', async () => {
      const { session, csrf } = await signedIn();
      for (const request of writes(UNKNOWN_ID)) {
        const res = await asUser(t, session, { ...request, csrf, headers: { origin: FOREIGN } });
        expectError(res, 403, 'forbidden');
      }
      const fromUi = await asUser(t, session, {
        method: 'PATCH',
        url: '/v1/account/profile',
        csrf,
        headers: { origin: UI },
        payload: { display_name: 'From the UI' },
      });
      expect(fromUi.statusCode, fromUi.body).toBe(200);
      expect(fromUi.headers['access-control-allow-origin']).toBe(UI);
      const own = await asUser(t, session, {
        method: 'PATCH',
        url: '/v1/account/profile',
        csrf,
        headers: { origin: 'http://localhost' },
        payload: { display_name: 'From the page' },
      });
      expect(own.statusCode, own.body).toBe(200);
    });

    it('preflights: the login UI origin may send PATCH and DELETE with X-CSRF-Token; others get 404', async () => {
      const preflight = (origin: string, url: string) =>
        t.inject({
          method: 'OPTIONS',
          url,
          headers: {
            origin,
            'access-control-request-method': 'DELETE',
            'access-control-request-headers': 'x-csrf-token',
          },
        });
      const ok = await preflight(UI, `/v1/account/sessions/${UNKNOWN_ID}`);
      expect(ok.statusCode).toBe(204);
      expect(ok.headers).toMatchObject({
        'access-control-allow-origin': UI,
        'access-control-allow-credentials': 'true',
        'access-control-allow-methods': 'GET, POST, PATCH, DELETE',
        'access-control-allow-headers': 'Content-Type, X-CSRF-Token',
      });
      expect((await preflight(FOREIGN, '/v1/account/profile')).statusCode).toBe(404);
      // The page is no API: no preflight for it.
      expect((await preflight(UI, '/v1/account')).statusCode).toBe(404);
      // The flow zone's preflight stays as it was.
      expect((await preflight(UI, '/v1/login')).headers['access-control-allow-methods']).toBe(
        'GET, POST',
      );
    });
  });

  describe('profile', () => {
    it('GET answers the identity, the CSRF token and the recent sign-in window', async () => {
      const { user, session } = await signedIn();
      const res = await asUser(t, session, { method: 'GET', url: '/v1/account/profile' });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.json()).toEqual({
        identity: user,
        csrf_token: expect.any(String),
        session_id: session.id,
        recent_sign_in_until: new Date(t.clock.now() + WINDOW).toISOString(),
        step_up_required: false,
      });
      t.clock.advance(WINDOW + 1);
      const later = await asUser(t, session, { method: 'GET', url: '/v1/account/profile' });
      expect(later.json().recent_sign_in_until).toBeNull();
    });

    it('PATCH changes display name and avatar, audited as the user', async () => {
      const { user, session, csrf } = await signedIn();
      const before = (await auditEntries(t)).length;
      const res = await asUser(t, session, {
        method: 'PATCH',
        url: '/v1/account/profile',
        csrf,
        payload: { display_name: 'Renamed', avatar_url: 'https://img.example/a.png' },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        id: user.id,
        display_name: 'Renamed',
        avatar_url: 'https://img.example/a.png',
      });
      const cleared = await asUser(t, session, {
        method: 'PATCH',
        url: '/v1/account/profile',
        csrf,
        payload: { avatar_url: null },
      });
      expect(cleared.json()).toMatchObject({ display_name: 'Renamed', avatar_url: null });
      const rows = (await auditSince(t, before)).filter((row) => row.action === 'identity_update');
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({
        service_name: 'browser',
        target_identity: user.id,
        details: { via: 'account', fields: ['display_name', 'avatar_url'] },
      });
    });

    it('validation errors carry a message and change nothing', async () => {
      const { user, session, csrf } = await signedIn();
      for (const payload of [
        { display_name: '' },
        { avatar_url: 'javascript:alert(1)' },
        { display_name: 5 },
        { username: 'new-name' },
      ]) {
        const res = await asUser(t, session, {
          method: 'PATCH',
          url: '/v1/account/profile',
          csrf,
          payload,
        });
        expect(res.statusCode).toBe(422);
        expect(res.json()).toEqual({ error: 'validation_error', message: expect.any(String) });
      }
      expect((await t.deps.store.findIdentityById(user.id))?.display_name).toBe(user.display_name);
    });
  });

  describe('sessions', () => {
    it('lists the user’s sessions newest first, marks this one, and ends another', async () => {
      const { user, session: laptop } = await signedIn();
      t.clock.advance(1000);
      const phone = await browserSignIn(t, user.username, {
        userAgent:
          'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36',
      });
      const csrf = await csrfOf(t, laptop);
      const list = await asUser(t, laptop, { method: 'GET', url: '/v1/account/sessions' });
      expect(list.statusCode).toBe(200);
      expect(
        list
          .json()
          .map((row: { id: string; current: boolean; browser: string }) => [
            row.id,
            row.current,
            row.browser,
          ]),
      ).toEqual([
        [phone.id, false, 'Chrome 130'],
        [laptop.id, true, 'Firefox 132'],
      ]);

      const before = (await auditEntries(t)).length;
      const ended = await asUser(t, laptop, {
        method: 'DELETE',
        url: `/v1/account/sessions/${phone.id}`,
        csrf,
      });
      expect(ended.statusCode, ended.body).toBe(204);
      expect(await whoamiStatus(t, phone)).toBe(401);
      expect(await whoamiStatus(t, laptop)).toBe(200);
      // Idempotent: the list may be out of date.
      expect(
        (
          await asUser(t, laptop, {
            method: 'DELETE',
            url: `/v1/account/sessions/${phone.id}`,
            csrf,
          })
        ).statusCode,
      ).toBe(204);
      const [row] = (await auditSince(t, before)).filter(
        (entry) => entry.action === 'session_revoke',
      );
      expect(row).toMatchObject({
        service_name: 'browser',
        target_identity: user.id,
        details: { session_id: phone.id, via: 'account' },
      });
    });

    it('another user’s session, an unknown id and a malformed id are all 404', async () => {
      const { session, csrf } = await signedIn();
      const stranger = await signedIn();
      for (const id of [stranger.session.id, UNKNOWN_ID, 'nope']) {
        expectError(
          await asUser(t, session, { method: 'DELETE', url: `/v1/account/sessions/${id}`, csrf }),
          404,
          'not_found',
        );
      }
      expect(await whoamiStatus(t, stranger.session)).toBe(200);
    });

    it('revoke-others ends every other session and keeps this one', async () => {
      const { user, session, csrf } = await signedIn();
      const others: BrowserSession[] = [];
      for (let i = 0; i < 3; i++) others.push(await browserSignIn(t, user.username));
      const res = await asUser(t, session, {
        method: 'POST',
        url: '/v1/account/sessions/revoke-others',
        csrf,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ revoked: 3 });
      for (const other of others) expect(await whoamiStatus(t, other)).toBe(401);
      expect(await whoamiStatus(t, session)).toBe(200);
      const again = await asUser(t, session, {
        method: 'POST',
        url: '/v1/account/sessions/revoke-others',
        csrf,
      });
      expect(again.json()).toEqual({ revoked: 0 });
    });

    it('ending this session signs this browser out and clears its cookie', async () => {
      const { session, csrf } = await signedIn();
      const res = await asUser(t, session, {
        method: 'DELETE',
        url: `/v1/account/sessions/${session.id}`,
        csrf,
      });
      expect(res.statusCode).toBe(204);
      expect(res.cookies.find((cookie) => cookie.name === 'service_session')?.value).toBe('');
      expect(await whoamiStatus(t, session)).toBe(401);
    });
  });

  describe('password', () => {
    const change = (session: BrowserSession, csrf: string, payload: Record<string, unknown>) =>
      asUser(t, session, { method: 'POST', url: '/v1/account/password', csrf, payload });

    it('with the current password: changes it, ends the other sessions, keeps this one, audited', async () => {
      const { user, session, csrf } = await signedIn();
      const other = await browserSignIn(t, user.username);
      t.clock.advance(WINDOW + 1);
      const before = (await auditEntries(t)).length;
      const res = await change(session, csrf, {
        current_password: PASSWORD,
        new_password: NEW_PASSWORD,
      });
      expect(res.statusCode, res.body).toBe(204);
      expect(await whoamiStatus(t, session)).toBe(200);
      expect(await whoamiStatus(t, other)).toBe(401);
      expect(await passwordWorks(t, directAuth, user.username, PASSWORD)).toBe(false);
      expect(await passwordWorks(t, directAuth, user.username, NEW_PASSWORD)).toBe(true);
      const [row] = (await auditSince(t, before)).filter(
        (entry) => entry.action === 'identity_set_password',
      );
      expect(row).toMatchObject({
        service_name: 'browser',
        target_identity: user.id,
        details: {
          via: 'account',
          revoke_sessions: true,
          revoked_sessions: 1,
          kept_session: session.id,
        },
      });
    });

    it('revoke_other_sessions false keeps the other sessions', async () => {
      const { user, session, csrf } = await signedIn();
      const other = await browserSignIn(t, user.username);
      const res = await change(session, csrf, {
        current_password: PASSWORD,
        new_password: NEW_PASSWORD,
        revoke_other_sessions: false,
      });
      expect(res.statusCode, res.body).toBe(204);
      expect(await whoamiStatus(t, other)).toBe(200);
    });

    it('a wrong current password is invalid_credentials and counts against the username', async () => {
      const { user, session, csrf } = await signedIn();
      t.clock.advance(WINDOW + 1);
      const res = await change(session, csrf, {
        current_password: 'wrong one',
        new_password: NEW_PASSWORD,
      });
      expectError(res, 401, 'invalid_credentials');
      const hit = await t.deps.store.hitRateLimit(
        `auth:user:${user.username}`,
        60_000,
        t.clock.now(),
      );
      // The sign-in's hit has left the 1-minute window; the guess and this one remain.
      expect(hit.count).toBe(2);
      expect(await passwordWorks(t, directAuth, user.username, PASSWORD)).toBe(true);
      // The session is still signed in: a wrong guess is no sign-out.
      expect(await whoamiStatus(t, session)).toBe(200);
    });

    it('without the current password only within the recent sign-in window', async () => {
      const { user, session, csrf } = await signedIn();
      t.clock.advance(WINDOW + 1);
      expectError(
        await change(session, csrf, { new_password: NEW_PASSWORD }),
        403,
        'forbidden',
        RECENT_SIGN_IN_REFUSAL,
      );
      expectError(
        await change(session, csrf, { current_password: '', new_password: NEW_PASSWORD }),
        403,
        'forbidden',
        RECENT_SIGN_IN_REFUSAL,
      );
      const fresh = await browserSignIn(t, user.username);
      const res = await change(fresh, await csrfOf(t, fresh), { new_password: NEW_PASSWORD });
      expect(res.statusCode, res.body).toBe(204);
      expect(await passwordWorks(t, directAuth, user.username, NEW_PASSWORD)).toBe(true);
    });

    it('the policy applies, with a message that says what to do', async () => {
      const { user, session, csrf } = await signedIn();
      for (const newPassword of [user.username, 'password', 'short']) {
        const res = await change(session, csrf, {
          current_password: PASSWORD,
          new_password: newPassword,
        });
        expect(res.statusCode).toBe(422);
        expect(res.json()).toEqual({ error: 'validation_error', message: expect.any(String) });
      }
      const missing = await change(session, csrf, { current_password: PASSWORD });
      expect(missing.json()).toEqual({
        error: 'validation_error',
        message: expect.stringContaining('new_password'),
      });
      expect(await passwordWorks(t, directAuth, user.username, PASSWORD)).toBe(true);
    });

    it('recovery: a link sign-in opens the window, so a password is set without the old one', async () => {
      const linker = await t.token('external_auth');
      const pair = { provider: 'email', subject: `recover-${Math.random()}` };
      const username = `rec${Math.floor(Math.random() * 1e9)}`;
      const link = await t.call('POST', '/v1/authenticate/link', linker, {
        ...pair,
        seed: { username, display_name: 'Recovering' },
      });
      expect(link.statusCode, link.body).toBe(201);
      // Later the user forgot it all: an old session is not enough ...
      const old = {
        token: link.json().token,
        id: link.json().session.id,
        cookie: `service_session=${link.json().token}`,
      };
      t.clock.advance(WINDOW + 1);
      expectError(
        await change(old, await csrfOf(t, old), { new_password: NEW_PASSWORD }),
        403,
        'forbidden',
        RECENT_SIGN_IN_REFUSAL,
      );
      // ... but the backend proving control of the email again mints a fresh session.
      const again = await t.call('POST', '/v1/authenticate/link', linker, pair);
      expect(again.statusCode).toBe(200);
      const fresh = {
        token: again.json().token,
        id: again.json().session.id,
        cookie: `service_session=${again.json().token}`,
      };
      const res = await change(fresh, await csrfOf(t, fresh), { new_password: NEW_PASSWORD });
      expect(res.statusCode, res.body).toBe(204);
      expect(await passwordWorks(t, directAuth, username, NEW_PASSWORD)).toBe(true);
      expect(await whoamiStatus(t, old)).toBe(401);
      expect(await whoamiStatus(t, fresh)).toBe(200);
    });
  });

  describe('form posts (the page, without JavaScript)', () => {
    const form = (session: BrowserSession | null, url: string, fields: Record<string, string>) =>
      asUser(t, session, {
        method: 'POST',
        url,
        headers: { 'content-type': FORM, accept: BROWSER_ACCEPT },
        payload: new URLSearchParams(fields).toString(),
      });

    it('answer 303 back to the page with a notice', async () => {
      const { user, session, csrf } = await signedIn();
      const other = await browserSignIn(t, user.username);
      const saved = await form(session, '/v1/account/profile', {
        csrf_token: csrf,
        display_name: 'Formed',
        avatar_url: '',
      });
      expect(saved.statusCode, saved.body).toBe(303);
      expect(saved.headers.location).toBe('/v1/account?done=profile');
      expect((await t.deps.store.findIdentityById(user.id))?.display_name).toBe('Formed');
      const ended = await form(session, `/v1/account/sessions/${other.id}/revoke`, {
        csrf_token: csrf,
      });
      expect(ended.headers.location).toBe('/v1/account?done=session');
      expect(await whoamiStatus(t, other)).toBe(401);
      const page = await asUser(t, session, {
        method: 'GET',
        url: '/v1/account?done=session',
        headers: { accept: BROWSER_ACCEPT },
      });
      expect(page.body).toContain('role="status">The session was ended.');
      const changed = await form(session, '/v1/account/password', {
        csrf_token: csrf,
        current_password: PASSWORD,
        new_password: NEW_PASSWORD,
        new_password_confirm: NEW_PASSWORD,
      });
      // The checkbox was unticked: other sessions stay.
      expect(changed.headers.location).toBe('/v1/account?done=password-kept');
    });

    it('a refused form shows the page again with the message, at the error’s status', async () => {
      const { session, csrf } = await signedIn();
      const mismatch = await form(session, '/v1/account/password', {
        csrf_token: csrf,
        current_password: PASSWORD,
        new_password: NEW_PASSWORD,
        new_password_confirm: 'something else',
      });
      expect(mismatch.statusCode).toBe(422);
      expect(mismatch.headers['content-type']).toContain('text/html');
      expect(mismatch.body).toContain('role="alert">The two new passwords differ');
      const noToken = await form(session, '/v1/account/profile', { display_name: 'X' });
      expect(noToken.statusCode).toBe(403);
      expect(noToken.body).toContain('The page is out of date');
      const foreign = await asUser(t, session, {
        method: 'POST',
        url: '/v1/account/profile',
        headers: { 'content-type': FORM, origin: FOREIGN },
        payload: `csrf_token=${encodeURIComponent(csrf)}&display_name=X`,
      });
      expect(foreign.statusCode).toBe(403);
      expect(foreign.body).toContain('from another site');
      const signedOut = await form(null, '/v1/account/profile', {
        csrf_token: csrf,
        display_name: 'X',
      });
      expect(signedOut.statusCode).toBe(303);
      expect(signedOut.headers.location).toMatch(/^\/v1\/login/);
    });

    it('GET /v1/account: the page when signed in, else 303 to the login coming back here', async () => {
      const out = await t.inject({
        method: 'GET',
        url: '/v1/account',
        headers: { accept: BROWSER_ACCEPT, host: 'id.example' },
      });
      expect(out.statusCode).toBe(303);
      expect(out.headers.location).toBe(
        `/v1/login?return_to=${encodeURIComponent('http://id.example/v1/account')}`,
      );
      const { user, session } = await signedIn();
      const page = await asUser(t, session, { method: 'GET', url: '/v1/account' });
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
      expect(page.body).toContain(user.username);
      expect(page.body).toContain('This device');
      expect(page.body).toContain('Firefox 132 on Windows 10');
      expect(page.body).toContain('href="/v1/account/passkeys"');
      expect(page.body).toContain('href="/v1/account/two-factor"');
      expect(page.body).not.toContain('<script');
    });
  });
});

describe('account page escapes what users control', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(() => t?.close());

  it('display names and user agents are text, never markup', async () => {
    const user = await addUser(t);
    const evil = '<img src=x onerror=alert(1)>';
    const session = await browserSignIn(t, user.username, { userAgent: `${evil} Firefox/1` });
    const csrf = await csrfOf(t, session);
    await asUser(t, session, {
      method: 'PATCH',
      url: '/v1/account/profile',
      csrf,
      payload: { display_name: evil },
    });
    const page = await asUser(t, session, { method: 'GET', url: '/v1/account' });
    expect(page.body).not.toContain('<img');
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(PASSWORD).not.toBe(NEW_PASSWORD);
  });
});
