import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  APP_ORIGIN,
  type FlowTestApp,
  createFlowApp,
  sessionTokenOf,
  signIn,
  startFlow,
} from './helpers.js';

const UI_ORIGIN = 'https://login.example';
const EVIL = 'https://evil.example';

function expectCors(res: LightMyRequestResponse, origin: string): void {
  expect(res.headers['access-control-allow-origin']).toBe(origin);
  expect(res.headers['access-control-allow-credentials']).toBe('true');
  expect(String(res.headers.vary)).toMatch(/\bOrigin\b/);
}

function expectNoCors(res: LightMyRequestResponse): void {
  for (const name of Object.keys(res.headers)) expect(name).not.toMatch(/^access-control-/);
}

const preflight = (t: FlowTestApp, url: string, origin: string, method = 'POST') =>
  t.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'content-type',
    },
  });

for (const withUi of [false, true]) {
  describeEachDatabase(`CORS zones (login UI ${withUi ? 'set' : 'unset'})`, (kind) => {
    let t: FlowTestApp;
    let cookie: string;
    let flowId: string;
    beforeAll(async () => {
      t = await createFlowApp(kind, withUi ? { SERVICE_LOGIN_UI_URL: `${UI_ORIGIN}/login` } : {});
      cookie = `service_session=${sessionTokenOf(await signIn(t, await startFlow(t)))}`;
      flowId = (await startFlow(t)).id;
    });
    afterAll(() => t?.close());

    const sessionOrigins = withUi ? [APP_ORIGIN, UI_ORIGIN] : [APP_ORIGIN];
    const credentialOrigins = withUi ? [UI_ORIGIN] : [];

    it('session zone: whoami echoes a listed origin with credentials', async () => {
      for (const origin of sessionOrigins) {
        const res = await t.inject({
          method: 'GET',
          url: '/v1/whoami',
          headers: { origin, cookie },
        });
        expect(res.statusCode).toBe(200);
        expectCors(res, origin);
      }
    });

    it('session zone: preflights for whoami and logout from a listed origin', async () => {
      for (const origin of sessionOrigins) {
        for (const url of ['/v1/whoami', '/v1/logout']) {
          const res = await preflight(t, url, origin);
          expect(res.statusCode).toBe(204);
          expectCors(res, origin);
          expect(res.headers['access-control-allow-methods']).toBe('GET, POST');
          expect(res.headers['access-control-allow-headers']).toBe('Content-Type');
        }
      }
    });

    it('session zone: an unlisted origin gets no CORS headers, on requests and preflights', async () => {
      const res = await t.inject({
        method: 'GET',
        url: '/v1/whoami',
        headers: { origin: EVIL, cookie },
      });
      expectNoCors(res);
      for (const url of ['/v1/whoami', '/v1/logout']) {
        const pre = await preflight(t, url, EVIL);
        expectNoCors(pre);
        expect(pre.statusCode).toBe(404);
      }
      // Origins must match exactly: scheme, host and port.
      for (const near of [
        'http://app.example',
        'https://app.example:444',
        'https://APP.example.',
      ]) {
        expectNoCors(
          await t.inject({ method: 'GET', url: '/v1/whoami', headers: { origin: near } }),
        );
      }
    });

    it('credential-entry zone: only the login UI origin', async () => {
      const targets: [string, string][] = [
        ['GET', '/v1/login'],
        ['GET', `/v1/flows/${flowId}`],
        ['POST', `/v1/flows/${flowId}/password`],
      ];
      for (const [method, url] of targets) {
        for (const origin of credentialOrigins) {
          const pre = await preflight(t, url, origin, method);
          expect(pre.statusCode).toBe(204);
          expectCors(pre, origin);
        }
        // The session zone's origins are not credential-entry origins.
        for (const origin of [APP_ORIGIN, EVIL])
          expectNoCors(await preflight(t, url, origin, method));
      }
      const read = await t.inject({
        method: 'GET',
        url: `/v1/flows/${flowId}`,
        headers: { origin: withUi ? UI_ORIGIN : APP_ORIGIN },
      });
      expect(read.statusCode).toBe(200);
      if (withUi) expectCors(read, UI_ORIGIN);
      else expectNoCors(read);
    });

    it('the login UI can run a whole JSON flow cross-origin', async () => {
      if (!withUi) {
        // Without a login UI a cross-origin submission is refused as login CSRF.
        const flow = await startFlow(t);
        expect((await signIn(t, flow, { origin: UI_ORIGIN })).statusCode).toBe(403);
        return;
      }
      const created = await t.inject({
        method: 'GET',
        url: '/v1/login',
        headers: { origin: UI_ORIGIN, accept: 'application/json' },
      });
      expectCors(created, UI_ORIGIN);
      const res = await signIn(t, created.json(), { origin: UI_ORIGIN });
      expect(res.statusCode).toBe(200);
      expectCors(res, UI_ORIGIN);
    });

    it('service endpoints carry no CORS headers, and have no preflight', async () => {
      const introspect = await t.token('introspect');
      const verify = await t.inject({
        method: 'POST',
        url: '/v1/sessions/verify',
        headers: { origin: APP_ORIGIN, authorization: `Bearer ${introspect}` },
        payload: { token: cookie.split('=')[1] },
      });
      expect(verify.statusCode).toBe(200);
      expectNoCors(verify);
      expect(verify.headers.vary).toBeUndefined();
      for (const url of ['/v1/sessions/verify', '/v1/identities/x', '/healthz', '/nope']) {
        const pre = await preflight(t, url, APP_ORIGIN);
        expect(pre.statusCode).toBe(404);
        expect(pre.json()).toEqual({ error: 'not_found' });
        expectNoCors(pre);
      }
      expectNoCors(
        await t.inject({ method: 'GET', url: '/healthz', headers: { origin: APP_ORIGIN } }),
      );
    });
  });
}
