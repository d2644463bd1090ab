import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  auditEntries,
  auditSince,
  createIdentity,
  expectError,
  namedToken,
  PASSWORD,
  testActor,
  uniqueName,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

/** POST /v1/authenticate/password (API-DECISIONS 2) with SERVICE_RATE_LIMIT_LOGIN_USERNAME=3/1m. */
describeEachDatabase('password authentication', (kind) => {
  let t: TestApp;
  let direct: string;
  beforeAll(async () => {
    t = await createTestApp(kind, {
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '3/1m',
      SERVICE_RATE_LIMIT_LOGIN_IP: '2/1m',
    });
    direct = await t.token('direct_auth');
  });
  afterAll(() => t?.close());

  const authenticate = (username: unknown, password: unknown, token = direct) =>
    t.call('POST', '/v1/authenticate/password', token, { username, password });

  it('mints a password session for the right password, any username case', async () => {
    const identity = await createIdentity(t, uniqueName('kim'));
    const res = await authenticate(identity.username.toUpperCase(), PASSWORD);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['session', 'token']);
    expect(body.token).toMatch(/^tess_s_[A-Za-z0-9_-]{43}$/);
    expect(body.session).toMatchObject({ identity, authenticated_via: 'password' });
    const stored = await t.deps.store.findSessionById(body.session.id);
    expect(stored?.token_hash).not.toContain(body.token.slice(7));
    expect(stored?.token_hash).toHaveLength(43);
  });

  it('answers one identical invalid_credentials for every kind of wrong input', async () => {
    const identity = await createIdentity(t);
    const answers = [
      await authenticate(identity.username, 'wrong password!'),
      await authenticate(uniqueName('ghost'), PASSWORD),
      await authenticate('no', PASSWORD),
      await authenticate('bad name with spaces', PASSWORD),
      await authenticate(identity.username, ''),
    ];
    for (const res of answers) {
      expect(res.statusCode).toBe(401);
      expect(res.body).toBe('{"error":"invalid_credentials"}');
      expect(res.headers['content-type']).toBe(answers[0]!.headers['content-type']);
      expect(res.headers['retry-after']).toBeUndefined();
    }
  });

  it('identity_disabled only after a correct password', async () => {
    const identity = await createIdentity(t);
    await setIdentityState(t.deps, testActor, identity.id, 'disabled');
    expectError(
      await authenticate(identity.username, 'wrong password!'),
      401,
      'invalid_credentials',
    );
    expectError(await authenticate(identity.username, PASSWORD), 403, 'identity_disabled');
    await setIdentityState(t.deps, testActor, identity.id, 'active');
    expect((await authenticate(identity.username, PASSWORD)).statusCode).toBe(200);
  });

  it('audits success in the transaction and failures with their code', async () => {
    const identity = await createIdentity(t);
    const before = (await auditEntries(t)).length;
    const ok = await authenticate(identity.username, PASSWORD);
    await authenticate(identity.username, 'wrong password!');
    expect(await auditSince(t, before)).toEqual([
      expect.objectContaining({
        action: 'authenticate_password',
        target_identity: identity.id,
        outcome: 'ok',
        details: { sign_in_method: 'password', session_id: ok.json().session.id },
      }),
      expect.objectContaining({
        action: 'authenticate_password',
        outcome: 'invalid_credentials',
        details: expect.objectContaining({
          username: identity.username,
          sign_in_method: 'password',
        }),
      }),
    ]);
  });

  describe('per-username rate limit', () => {
    it('counts successful attempts too; the 4th answers 429 with retry_after', async () => {
      const identity = await createIdentity(t);
      for (let i = 0; i < 3; i += 1) {
        expect((await authenticate(identity.username, PASSWORD)).statusCode).toBe(200);
      }
      t.clock.advance(15_000);
      const res = await authenticate(identity.username, PASSWORD);
      expect(res.statusCode).toBe(429);
      expect(res.json()).toEqual({ error: 'rate_limited', retry_after: 45 });
      expect(res.headers['retry-after']).toBe('45');
    });

    it('applies to the normalised username and refuses even the right password', async () => {
      const identity = await createIdentity(t);
      await authenticate(identity.username, 'wrong password!');
      await authenticate(identity.username.toUpperCase(), 'wrong password!');
      await authenticate(` ${identity.username}`.trim(), 'wrong password!');
      const res = await authenticate(identity.username.toUpperCase(), PASSWORD);
      expect(res.statusCode).toBe(429);
      expect(res.json().error).toBe('rate_limited');
    });

    it('limits unknown usernames the same way', async () => {
      const ghost = uniqueName('ghost');
      for (let i = 0; i < 3; i += 1) {
        expectError(await authenticate(ghost, PASSWORD), 401, 'invalid_credentials');
      }
      expect((await authenticate(ghost, PASSWORD)).statusCode).toBe(429);
    });

    it('resets when the window is over', async () => {
      const identity = await createIdentity(t);
      for (let i = 0; i < 4; i += 1) await authenticate(identity.username, PASSWORD);
      t.clock.advance(59_999);
      expect((await authenticate(identity.username, PASSWORD)).statusCode).toBe(429);
      t.clock.advance(1);
      expect((await authenticate(identity.username, PASSWORD)).statusCode).toBe(200);
    });

    it('is kept per username: another user is unaffected', async () => {
      const [a, b] = [await createIdentity(t), await createIdentity(t)];
      for (let i = 0; i < 4; i += 1) await authenticate(a.username, PASSWORD);
      expect((await authenticate(b.username, PASSWORD)).statusCode).toBe(200);
    });

    it('counts in the database: a second app on the same database sees the count', async () => {
      const identity = await createIdentity(t);
      const second = await createTestApp(kind, { SERVICE_RATE_LIMIT_LOGIN_USERNAME: '3/1m' }, t.db);
      try {
        second.clock.advance(t.clock.now() - second.clock.now());
        const token = await namedToken(second, 'direct_auth');
        for (let i = 0; i < 3; i += 1) await authenticate(identity.username, PASSWORD);
        const res = await second.call('POST', '/v1/authenticate/password', token, {
          username: identity.username,
          password: PASSWORD,
        });
        expect(res.statusCode).toBe(429);
      } finally {
        await second.close();
      }
    });
  });

  describe('X-Service-Client-Ip', () => {
    const withIp = (token: string, ip: string, username: string) =>
      t.inject({
        method: 'POST',
        url: '/v1/authenticate/password',
        headers: { authorization: `Bearer ${token}`, 'x-service-client-ip': ip },
        payload: { username, password: PASSWORD },
      });

    it('is refused with 403 forbidden from a caller without browser_proxy', async () => {
      const identity = await createIdentity(t);
      expectError(await withIp(direct, '203.0.113.9', identity.username), 403, 'forbidden');
    });

    it('from a browser_proxy caller limits per stated address', async () => {
      const proxy = await t.token('direct_auth', 'browser_proxy');
      const users = [await createIdentity(t), await createIdentity(t), await createIdentity(t)];
      expect((await withIp(proxy, '203.0.113.10', users[0]!.username)).statusCode).toBe(200);
      expect((await withIp(proxy, '203.0.113.10', users[1]!.username)).statusCode).toBe(200);
      const limited = await withIp(proxy, '203.0.113.10', users[2]!.username);
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error).toBe('rate_limited');
      expect((await withIp(proxy, '2001:db8::1', users[2]!.username)).statusCode).toBe(200);
    });

    it('answers 422 for a malformed address', async () => {
      const proxy = await t.token('direct_auth', 'browser_proxy');
      const res = await withIp(proxy, 'not-an-ip', 'someone');
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toBe('validation_error');
    });
  });
});
