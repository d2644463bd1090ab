import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { auditSince, auditEntries, expectError } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  FIREFOX,
  NEW_PASSWORD,
  PASSWORD,
  SAFARI_IOS,
  addUser,
  browserSignIn,
  passwordWorks,
  whoamiStatus,
} from './helpers.js';

const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';

/** Issue 14 items 2 and 6: the service endpoints, and the device every sign-in records. */
describeEachDatabase('identity sessions and password (service API)', (kind) => {
  let t: TestApp;
  let introspect: string;
  let directAuth: string;
  let proxy: string;
  let linker: string;
  beforeAll(async () => {
    t = await createTestApp(kind, { SERVICE_RATE_LIMIT_LOGIN_USERNAME: '1000/1m' });
    introspect = await t.token('introspect');
    directAuth = await t.token('direct_auth');
    proxy = await t.token('direct_auth', 'browser_proxy');
    linker = await t.token('external_auth');
  });
  afterAll(() => t?.close());

  const list = (id: string, token = introspect) =>
    t.call('GET', `/v1/identities/${id}/sessions`, token);

  describe('GET /v1/identities/{id}/sessions', () => {
    it('lists live sessions newest first with the device of each sign-in', async () => {
      const user = await addUser(t);
      const first = await browserSignIn(t, user.username, {
        userAgent: FIREFOX,
        address: '198.51.100.7',
      });
      t.clock.advance(1000);
      // A backend proxying the browser states its address and user agent.
      const direct = await t.inject({
        method: 'POST',
        url: '/v1/authenticate/password',
        headers: {
          authorization: `Bearer ${proxy}`,
          'x-service-client-ip': '2001:db8::5',
          'x-service-client-user-agent': SAFARI_IOS,
          'user-agent': 'backend-http-client/1.0',
        },
        payload: { username: user.username, password: PASSWORD },
      });
      expect(direct.statusCode, direct.body).toBe(200);
      t.clock.advance(1000);
      // A direct sign-in stating nothing records nothing about a device it does not know.
      expect(await passwordWorks(t, directAuth, user.username, PASSWORD)).toBe(true);

      const res = await list(user.id);
      expect(res.statusCode).toBe(200);
      const rows = res.json() as Record<string, unknown>[];
      expect(rows).toHaveLength(3);
      expect(rows[0]).toMatchObject({
        user_agent: null,
        client_address: null,
        browser: null,
        os: null,
      });
      expect(rows[1]).toMatchObject({
        id: direct.json().session.id,
        user_agent: SAFARI_IOS,
        client_address: '2001:db8::5',
        browser: 'Mobile Safari 17',
        os: 'iOS 17.4',
      });
      // Each item is the Session object whoami answers (issue 22 item 9: `identity`, `aal`),
      // with `identity_id` kept and the device fields added.
      const whoami = await t.inject({
        method: 'GET',
        url: '/v1/whoami',
        headers: { cookie: first.cookie },
      });
      expect(whoami.json()).toMatchObject({ id: first.id, aal: 'aal1' });
      expect(rows[2]).toEqual({
        ...whoami.json(),
        identity_id: user.id,
        last_used_at: rows[2]!.issued_at,
        user_agent: FIREFOX,
        client_address: '198.51.100.7',
        browser: 'Firefox 132',
        os: 'Windows 10',
      });
      expect(JSON.stringify(rows)).not.toContain(first.token);
    });

    it('records a link sign-in’s stated user agent; its stated address only from a browser_proxy', async () => {
      const pair = { provider: 'mail', subject: `s-${Math.random()}` };
      const headers = {
        'x-service-client-ip': '203.0.113.9',
        'x-service-client-user-agent': FIREFOX,
      };
      const created = await t.inject({
        method: 'POST',
        url: '/v1/authenticate/link',
        headers: { authorization: `Bearer ${linker}`, ...headers },
        payload: { ...pair, seed: { username: `l${Date.now()}`, display_name: 'Linked' } },
      });
      // Without browser_proxy the address is ignored, as this endpoint always did.
      expect(created.statusCode, created.body).toBe(201);
      const [row] = (await list(created.json().session.identity.id)).json();
      expect(row).toMatchObject({
        user_agent: FIREFOX,
        client_address: null,
        authenticated_via: 'link',
      });
    });

    it('leaves out revoked and expired sessions', async () => {
      const user = await addUser(t);
      const a = await browserSignIn(t, user.username);
      const b = await browserSignIn(t, user.username);
      const revoke = await t.token('revoke');
      expect(
        (await t.call('POST', '/v1/sessions/revoke', revoke, { session_id: a.id })).statusCode,
      ).toBe(204);
      expect((await list(user.id)).json().map((row: { id: string }) => row.id)).toEqual([b.id]);
      t.clock.advance(t.deps.sessionTtlMs);
      expect((await list(user.id)).json()).toEqual([]);
    });

    it('404 for an unknown or malformed identity id; needs introspect; audited', async () => {
      const before = (await auditEntries(t)).length;
      expectError(await list(UNKNOWN_ID), 404, 'not_found');
      expectError(await list('not-a-uuid'), 404, 'not_found');
      const user = await addUser(t);
      expectError(await list(user.id, directAuth), 403, 'forbidden', /introspect grant/);
      expectError(await list(user.id, null as unknown as string), 401, 'missing_service_token');
      expect((await list(user.id)).statusCode).toBe(200);
      const rows = await auditSince(t, before);
      expect(
        rows.filter((row) => row.action === 'identity_sessions_list').map((row) => row.outcome),
      ).toEqual(['not_found', 'not_found', 'forbidden', 'ok']);
    });
  });

  describe('PUT /v1/identities/{id}/password', () => {
    const put = (id: string, body: unknown, token = directAuth) =>
      t.call('PUT', `/v1/identities/${id}/password`, token, body);

    it('sets the password and ends every session by default, audited in the same transaction', async () => {
      const user = await addUser(t);
      const session = await browserSignIn(t, user.username);
      const before = (await auditEntries(t)).length;
      const res = await put(user.id, { password: NEW_PASSWORD });
      expect(res.statusCode, res.body).toBe(204);
      expect(res.body).toBe('');
      expect(await whoamiStatus(t, session)).toBe(401);
      expect(await passwordWorks(t, directAuth, user.username, PASSWORD)).toBe(false);
      expect(await passwordWorks(t, directAuth, user.username, NEW_PASSWORD)).toBe(true);
      const [row] = (await auditSince(t, before)).filter(
        (entry) => entry.action === 'identity_set_password',
      );
      expect(row).toMatchObject({
        target_identity: user.id,
        outcome: 'ok',
        service_name: expect.stringMatching(/^svc-/),
        details: { credential: 'password', revoke_sessions: true, revoked_sessions: 1 },
      });
      expect(JSON.stringify(row)).not.toContain(NEW_PASSWORD);
    });

    it('revoke_sessions false keeps the sessions', async () => {
      const user = await addUser(t);
      const session = await browserSignIn(t, user.username);
      expect(
        (await put(user.id, { password: NEW_PASSWORD, revoke_sessions: false })).statusCode,
      ).toBe(204);
      expect(await whoamiStatus(t, session)).toBe(200);
      expect(await passwordWorks(t, directAuth, user.username, NEW_PASSWORD)).toBe(true);
    });

    it('applies the password policy, validates the body, 404s unknown ids, needs direct_auth', async () => {
      const user = await addUser(t);
      const weak = await put(user.id, { password: user.username });
      expect(weak.statusCode).toBe(422);
      expect(weak.json()).toEqual({ error: 'validation_error', message: expect.any(String) });
      const missing = await put(user.id, {});
      expect(missing.json()).toEqual({
        error: 'validation_error',
        message: expect.stringContaining('password'),
      });
      const extra = await put(user.id, { password: NEW_PASSWORD, revoke_sessions: 'yes' });
      expect(extra.statusCode).toBe(422);
      expectError(await put(UNKNOWN_ID, { password: NEW_PASSWORD }), 404, 'not_found');
      expectError(await put('nope', { password: NEW_PASSWORD }), 404, 'not_found');
      const refused = await put(user.id, { password: NEW_PASSWORD }, introspect);
      expectError(refused, 403, 'forbidden', /direct_auth grant/);
      expect(await passwordWorks(t, directAuth, user.username, PASSWORD)).toBe(true);
    });
  });
});
