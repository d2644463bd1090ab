import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSRF_REFUSAL } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { BROWSER_ACCEPT, expectError, sessionTokenOf } from '../flows/helpers.js';
import { type PasskeyTestApp, createPasskeyApp } from '../passkeys/helpers.js';
import { signInWithCode, totpCode } from '../second-factor/helpers.js';

const SERVICE = 'https://id.example.com';
const UI = 'https://login.example.com';
const FOREIGN = 'https://evil.example.com';
const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';

/** The passkey and two-factor JSON routes, with the rest of the account API. */
const URLS = [
  '/v1/account/passkeys',
  '/v1/account/passkeys/options',
  `/v1/account/passkeys/${UNKNOWN_ID}`,
  '/v1/account/two-factor',
  '/v1/account/two-factor/totp',
  '/v1/account/two-factor/totp/confirm',
  '/v1/account/two-factor/recovery-codes',
  '/v1/account/two-factor/disable',
];

function expectCors(res: LightMyRequestResponse, origin = UI): void {
  expect(res.headers['access-control-allow-origin'], res.body).toBe(origin);
  expect(res.headers['access-control-allow-credentials']).toBe('true');
  expect(res.headers.vary).toContain('Origin');
}

function expectNoCors(res: LightMyRequestResponse): void {
  const cors = Object.keys(res.headers).filter((name) => name.startsWith('access-control-'));
  expect(cors, res.body).toEqual([]);
}

/**
 * The operator's own UI (the origin of SERVICE_LOGIN_UI_URL) manages passkeys and the
 * second factor through the account CORS zone; no other origin reads or changes anything.
 */
describeEachDatabase('passkeys and two-factor in the account CORS zone', (kind) => {
  let t: PasskeyTestApp;
  beforeAll(async () => {
    t = await createPasskeyApp(kind, {
      SERVICE_PUBLIC_URL: SERVICE,
      SERVICE_LOGIN_UI_URL: `${UI}/signin`,
      SERVICE_WEBAUTHN_RP_ID: 'example.com',
      SERVICE_RATE_LIMIT_LOGIN_IP: '1000/60s',
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
    });
  });
  afterAll(() => t?.close());

  const preflight = (origin: string, url: string, method = 'DELETE') =>
    t.inject({
      method: 'OPTIONS',
      url,
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': 'content-type, x-csrf-token',
      },
    });

  describe('a listed origin', () => {
    it('preflights every route with the account methods and X-CSRF-Token', async () => {
      for (const url of URLS) {
        const res = await preflight(UI, url);
        expect(res.statusCode, url).toBe(204);
        expectCors(res);
        expect(res.headers).toMatchObject({
          'access-control-allow-methods': 'GET, POST, PATCH, DELETE',
          'access-control-allow-headers': 'Content-Type, X-CSRF-Token',
          'access-control-max-age': '600',
        });
      }
    });

    it('adds, lists, renames and deletes a passkey with credentials; the CSRF header is readable', async () => {
      const token = await t.passwordSignIn();
      const list = await t.account('GET', '/v1/account/passkeys', token, {
        csrf: null,
        origin: UI,
      });
      expect(list.statusCode, list.body).toBe(200);
      expectCors(list);
      expect(list.headers['access-control-expose-headers']).toBe('X-CSRF-Token');
      const csrf = list.headers['x-csrf-token'] as string;
      expect(csrf).toBeTruthy();

      const device = new SoftAuthenticator();
      const options = await t.account('POST', '/v1/account/passkeys/options', token, {
        body: {},
        csrf,
        origin: UI,
      });
      expect(options.statusCode, options.body).toBe(200);
      expectCors(options);
      const credential = device.register(options.json().options, { origin: UI });
      const added = await t.account('POST', '/v1/account/passkeys', token, {
        body: { credential, name: 'From the UI' },
        csrf,
        origin: UI,
      });
      expect(added.statusCode, added.body).toBe(201);
      expectCors(added);
      const id = added.json().id as string;

      const renamed = await t.account('PATCH', `/v1/account/passkeys/${id}`, token, {
        body: { name: 'Renamed' },
        csrf,
        origin: UI,
      });
      expect(renamed.statusCode, renamed.body).toBe(200);
      expectCors(renamed);
      // Removing a passkey needs a session as strong as the passkey (issue 22 item 5).
      const strong = sessionTokenOf(await t.passkeySignIn(device));
      const strongCsrf = await t.csrfFor(strong);
      const deleted = await t.account('DELETE', `/v1/account/passkeys/${id}`, strong, {
        csrf: strongCsrf,
        origin: UI,
      });
      expect(deleted.statusCode, deleted.body).toBe(204);
      expectCors(deleted);
      // A refusal is readable too: the UI can show why.
      const gone = await t.account('DELETE', `/v1/account/passkeys/${id}`, strong, {
        csrf: strongCsrf,
        origin: UI,
      });
      expectError(gone, 404, 'not_found');
      expectCors(gone);
    });

    it('enrols, confirms, regenerates and turns off TOTP with credentials', async () => {
      let token = await t.passwordSignIn();
      const json = (method: 'GET' | 'POST', path: string, body?: object, csrf?: string) =>
        t.account(method, `/v1/account/two-factor${path}`, token, {
          ...(body === undefined ? {} : { body }),
          csrf: csrf ?? null,
          origin: UI,
        });
      const status = await json('GET', '');
      expect(status.statusCode, status.body).toBe(200);
      expectCors(status);
      let csrf = status.json().csrf_token as string;

      const started = await json('POST', '/totp', {}, csrf);
      expect(started.statusCode, started.body).toBe(200);
      expectCors(started);
      const secret = started.json().secret as string;
      const code = await totpCode(secret, t.clock.now());
      const confirmed = await json('POST', '/totp/confirm', { code }, csrf);
      expect(confirmed.statusCode, confirmed.body).toBe(200);
      expectCors(confirmed);
      // TOTP is on: further changes need a session that used it (issue 22 item 5).
      token = await signInWithCode(t, 'alice', secret);
      csrf = (await json('GET', '')).json().csrf_token as string;
      const regenerated = await json('POST', '/recovery-codes', {}, csrf);
      expect(regenerated.statusCode, regenerated.body).toBe(200);
      expectCors(regenerated);
      const off = await json('POST', '/disable', {}, csrf);
      expect(off.statusCode, off.body).toBe(200);
      expectCors(off);
      expect(off.json()).toMatchObject({ enabled: false, pending: false });
    });

    it('still needs the CSRF token: refused, readably, and nothing changes', async () => {
      const token = await t.passwordSignIn();
      const refusals = [
        await t.account('POST', '/v1/account/passkeys/options', token, {
          body: {},
          csrf: null,
          origin: UI,
        }),
        await t.account('DELETE', `/v1/account/passkeys/${UNKNOWN_ID}`, token, {
          csrf: 'x'.repeat(43),
          origin: UI,
        }),
        await t.account('POST', '/v1/account/two-factor/totp', token, {
          body: {},
          csrf: null,
          origin: UI,
        }),
      ];
      for (const res of refusals) {
        expectError(res, 403, 'forbidden', CSRF_REFUSAL);
        expectCors(res);
      }
      const status = await t.account('GET', '/v1/account/two-factor', token, { origin: UI });
      expect(status.json()).toMatchObject({ enabled: false, pending: false });
    });

    it('gets no CORS header on the hosted pages behind the same paths', async () => {
      const token = await t.passwordSignIn();
      for (const url of ['/v1/account/passkeys', '/v1/account/two-factor']) {
        const page = await t.inject({
          method: 'GET',
          url,
          headers: { origin: UI, accept: BROWSER_ACCEPT },
          cookies: { service_session: token },
        });
        expect(page.statusCode, page.body).toBe(200);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        expectNoCors(page);
      }
    });
  });

  describe('an unlisted origin', () => {
    it('gets no CORS header, its preflight answers 404, and its changes are refused', async () => {
      for (const url of URLS) {
        const res = await preflight(FOREIGN, url);
        expectError(res, 404, 'not_found');
        expectNoCors(res);
      }
      const token = await t.passwordSignIn();
      const csrf = await t.csrfFor(token);
      const list = await t.account('GET', '/v1/account/passkeys', token, {
        csrf: null,
        origin: FOREIGN,
      });
      expect(list.statusCode).toBe(200);
      expectNoCors(list);
      const status = await t.account('GET', '/v1/account/two-factor', token, {
        origin: FOREIGN,
      });
      expect(status.statusCode).toBe(200);
      expectNoCors(status);

      const changes = [
        await t.account('POST', '/v1/account/passkeys/options', token, {
          body: {},
          csrf,
          origin: FOREIGN,
        }),
        await t.account('PATCH', `/v1/account/passkeys/${UNKNOWN_ID}`, token, {
          body: { name: 'x' },
          csrf,
          origin: FOREIGN,
        }),
        await t.account('DELETE', `/v1/account/passkeys/${UNKNOWN_ID}`, token, {
          csrf,
          origin: FOREIGN,
        }),
        await t.account('POST', '/v1/account/two-factor/totp', token, {
          body: {},
          csrf,
          origin: FOREIGN,
        }),
        await t.account('POST', '/v1/account/two-factor/disable', token, {
          body: {},
          csrf,
          origin: FOREIGN,
        }),
      ];
      for (const res of changes) {
        expectError(res, 403, 'forbidden');
        expectNoCors(res);
      }
      const after = await t.account('GET', '/v1/account/two-factor', token, {});
      expect(after.json()).toMatchObject({ enabled: false, pending: false });
    });

    it('the session zone’s origins do not open it', async () => {
      const res = await preflight('https://app.example', '/v1/account/passkeys');
      expect(res.statusCode).toBe(404);
      expectNoCors(res);
    });
  });
});
