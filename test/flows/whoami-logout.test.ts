import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { newToken } from '../../src/lib/tokens.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  APP_ORIGIN,
  type FlowTestApp,
  LOOSE_SIGN_IN_LIMITS,
  createFlowApp,
  expectError,
  operator,
  sessionTokenOf,
  signIn,
  startFlow,
} from './helpers.js';

describeEachDatabase('GET /v1/whoami and POST /v1/logout', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_COOKIE_DOMAIN: 'localhost',
    });
  });
  afterAll(() => t?.close());

  async function newSession(): Promise<{ token: string; sessionId: string }> {
    const res = await signIn(t, await startFlow(t));
    return { token: sessionTokenOf(res), sessionId: res.json().session.id };
  }
  const whoami = (cookie?: string, headers: Record<string, string> = {}) =>
    t.inject({
      method: 'GET',
      url: '/v1/whoami',
      headers: { ...(cookie === undefined ? {} : { cookie }), ...headers },
    });
  const logout = (cookie?: string, headers: Record<string, string> = {}) =>
    t.inject({
      method: 'POST',
      url: '/v1/logout',
      headers: { ...(cookie === undefined ? {} : { cookie }), ...headers },
    });

  it('answers the session in the cookie, with no caching headers', async () => {
    const { token, sessionId } = await newSession();
    const res = await whoami(`other=1; service_session=${token}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: sessionId,
      identity: { id: t.alice.id, username: 'alice', display_name: 'Alice Example' },
      authenticated_via: 'password',
    });
    expect(res.headers['cache-control']).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['last-modified']).toBeUndefined();
  });

  it.each([
    ['no cookie', undefined],
    ['an empty cookie', 'service_session='],
    ['a garbled cookie', 'service_session=%%%not-a-token'],
    ['an unknown well-formed token', `service_session=${newToken('session')}`],
    ['a service token', `service_session=${newToken('service')}`],
    ['a flow id', `service_session=${newToken('flow')}`],
    ['a cookie under another name', `session=${newToken('session')}`],
  ])('401 invalid_token for %s', async (_label, cookie) => {
    expectError(await whoami(cookie), 401, 'invalid_token');
  });

  it('ignores the Authorization header: a bearer token is no session, nor does it spoil one', async () => {
    const introspect = await t.token('introspect');
    expectError(
      await whoami(undefined, { authorization: `Bearer ${introspect}` }),
      401,
      'invalid_token',
    );
    const { token } = await newSession();
    const res = await whoami(`service_session=${token}`, { authorization: 'Bearer garbage' });
    expect(res.statusCode).toBe(200);
  });

  it('401 session_expired after the lifetime, verified afresh on each call', async () => {
    const { token } = await newSession();
    t.clock.advance(72 * 3_600_000 - 1);
    expect((await whoami(`service_session=${token}`)).statusCode).toBe(200);
    t.clock.advance(1);
    expectError(await whoami(`service_session=${token}`), 401, 'session_expired');
  });

  it('403 identity_disabled while the identity is disabled, valid again once enabled', async () => {
    const { token } = await newSession();
    await setIdentityState(t.deps, operator, t.alice.id, 'disabled');
    expectError(await whoami(`service_session=${token}`), 403, 'identity_disabled');
    await setIdentityState(t.deps, operator, t.alice.id, 'active');
    expect((await whoami(`service_session=${token}`)).statusCode).toBe(200);
  });

  it('401 invalid_token once the session is revoked through the service API', async () => {
    const { token } = await newSession();
    const revoke = await t.token('revoke');
    await t.call('POST', '/v1/sessions/revoke', revoke, { token });
    expectError(await whoami(`service_session=${token}`), 401, 'invalid_token');
  });

  it('logout revokes the session, clears the cookie with the same attributes and answers 204', async () => {
    const { token, sessionId } = await newSession();
    const res = await logout(`service_session=${token}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    const cleared = res.headers['set-cookie'] as string;
    expect(cleared.split('; ')[0]).toBe('service_session=');
    expect(cleared.split('; ').slice(1).sort()).toEqual(
      [
        'Domain=localhost',
        'Expires=Thu, 01 Jan 1970 00:00:00 GMT',
        'HttpOnly',
        'Max-Age=0',
        'Path=/',
        'SameSite=Lax',
        'Secure',
      ].sort(),
    );
    expectError(await whoami(`service_session=${token}`), 401, 'invalid_token');
    const session = await t.deps.store.findSessionById(sessionId);
    expect(session?.revoked_at).toBe(t.clock.now());
  });

  it.each([
    ['no cookie', undefined],
    ['a garbled cookie', 'service_session=junk'],
    ['an unknown token', `service_session=${newToken('session')}`],
  ])('logout with %s is still 204 and clears the cookie', async (_label, cookie) => {
    const res = await logout(cookie);
    expect(res.statusCode).toBe(204);
    expect(res.headers['set-cookie']).toMatch(/^service_session=; /);
  });

  it('logout from a foreign Origin is 403 forbidden and the session survives', async () => {
    const { token } = await newSession();
    for (const origin of ['https://evil.example', 'null']) {
      const res = await logout(`service_session=${token}`, { origin });
      expectError(res, 403, 'forbidden');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect((await whoami(`service_session=${token}`)).statusCode).toBe(200);
    // A listed session origin and our own origin may log out.
    expect((await logout(`service_session=${token}`, { origin: APP_ORIGIN })).statusCode).toBe(204);
    const second = await newSession();
    const own = await logout(`service_session=${second.token}`, { origin: 'http://localhost' });
    expect(own.statusCode).toBe(204);
  });
});
