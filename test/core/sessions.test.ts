import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { newToken } from '../../src/lib/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  auditEntries,
  auditSince,
  createIdentity,
  createSession,
  expectError,
  testActor,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

const HALF_HOUR = 30 * 60_000;
const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';

/** SPEC.md 2.3, 3.2 and API-DECISIONS 2 (verify, revoke, revoke-sessions), TTL 0.5 hours. */
describeEachDatabase('sessions', (kind) => {
  let t: TestApp;
  let introspect: string;
  let revoke: string;
  beforeAll(async () => {
    t = await createTestApp(kind, { SERVICE_SESSION_TTL_HOURS: '0.5' });
    introspect = await t.token('introspect');
    revoke = await t.token('revoke');
  });
  afterAll(() => t?.close());

  const verify = (token: unknown) => t.call('POST', '/v1/sessions/verify', introspect, { token });
  const revokeBy = (body: unknown) => t.call('POST', '/v1/sessions/revoke', revoke, body);

  describe('POST /v1/sessions/verify', () => {
    it('answers the Session with the embedded identity and the configured lifetime', async () => {
      const identity = await createIdentity(t);
      const session = await createSession(t, identity.id);
      const res = await verify(session.token);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        id: session.id,
        identity,
        issued_at: new Date(t.clock.now()).toISOString(),
        expires_at: new Date(t.clock.now() + HALF_HOUR).toISOString(),
        authenticated_via: 'password',
        aal: 'aal1',
      });
    });

    it('is valid until just before expires_at, then session_expired', async () => {
      const session = await createSession(t, (await createIdentity(t)).id);
      t.clock.advance(HALF_HOUR - 1);
      expect((await verify(session.token)).statusCode).toBe(200);
      t.clock.advance(1);
      expectError(await verify(session.token), 401, 'session_expired');
    });

    it.each([
      ['an unknown well-formed token', newToken('session')],
      ['a service token', newToken('service')],
      ['a flow id', newToken('flow')],
      ['a token without the prefix', 'a'.repeat(43)],
      ['a short token', 'tess_s_abc'],
      ['an empty string', ''],
    ])('answers 401 invalid_token for %s', async (_label, token) => {
      expectError(await verify(token), 401, 'invalid_token');
    });

    it('refuses a real service token presented as a session', async () => {
      expectError(await verify(revoke), 401, 'invalid_token');
    });

    it('verification is audited with the session and identity', async () => {
      const identity = await createIdentity(t);
      const session = await createSession(t, identity.id);
      const before = (await auditEntries(t)).length;
      await verify(session.token);
      await verify(newToken('session'));
      expect(await auditSince(t, before)).toEqual([
        expect.objectContaining({
          action: 'session_verify',
          target_identity: identity.id,
          outcome: 'ok',
          details: expect.objectContaining({ session_id: session.id }),
        }),
        expect.objectContaining({ action: 'session_verify', outcome: 'invalid_token' }),
      ]);
    });
  });

  describe('disabled identities', () => {
    it('disable keeps sessions (identity_disabled) and enable restores them', async () => {
      const identity = await createIdentity(t);
      const session = await createSession(t, identity.id);
      const disabled = await setIdentityState(t.deps, testActor, identity.id, 'disabled');
      expect(disabled).toMatchObject({ identity: { state: 'disabled' }, revoked_sessions: 0 });
      expectError(await verify(session.token), 403, 'identity_disabled');
      await setIdentityState(t.deps, testActor, identity.username, 'active');
      expect((await verify(session.token)).json().identity.state).toBe('active');
    });

    it('disable with revokeSessions revokes them for good', async () => {
      const identity = await createIdentity(t);
      const sessions = [await createSession(t, identity.id), await createSession(t, identity.id)];
      const result = await setIdentityState(t.deps, testActor, identity.id, 'disabled', {
        revokeSessions: true,
      });
      expect(result.revoked_sessions).toBe(2);
      await setIdentityState(t.deps, testActor, identity.id, 'active');
      for (const session of sessions)
        expectError(await verify(session.token), 401, 'invalid_token');
      const rows = (await auditEntries(t)).filter((row) => row.target_identity === identity.id);
      expect(rows.map((row) => [row.action, row.details.revoked_sessions])).toEqual([
        ['identity_register', undefined],
        ['identity_disable', 2],
        ['identity_enable', undefined],
      ]);
    });

    it('an expired session of a disabled identity reports session_expired', async () => {
      const identity = await createIdentity(t);
      const session = await createSession(t, identity.id);
      await setIdentityState(t.deps, testActor, identity.id, 'disabled');
      t.clock.advance(HALF_HOUR);
      expectError(await verify(session.token), 401, 'session_expired');
    });
  });

  describe('POST /v1/sessions/revoke', () => {
    it('by token: 204, takes effect at once, and is idempotent', async () => {
      const session = await createSession(t, (await createIdentity(t)).id);
      const first = await revokeBy({ token: session.token });
      expect(first.statusCode).toBe(204);
      expect(first.body).toBe('');
      expectError(await verify(session.token), 401, 'invalid_token');
      expect((await revokeBy({ token: session.token })).statusCode).toBe(204);
    });

    it('by token: 204 for an unknown or expired well-formed token', async () => {
      expect((await revokeBy({ token: newToken('session') })).statusCode).toBe(204);
      const session = await createSession(t, (await createIdentity(t)).id);
      t.clock.advance(HALF_HOUR + 1);
      expect((await revokeBy({ token: session.token })).statusCode).toBe(204);
    });

    it('by token: 401 invalid_token for a malformed token', async () => {
      expectError(await revokeBy({ token: 'tess_s_nope' }), 401, 'invalid_token');
      expectError(await revokeBy({ token: newToken('service') }), 401, 'invalid_token');
    });

    it('by id: 204, also when already revoked; 404 when unknown', async () => {
      const identity = await createIdentity(t);
      const session = await createSession(t, identity.id);
      const other = await createSession(t, identity.id);
      expect((await revokeBy({ session_id: session.id })).statusCode).toBe(204);
      expectError(await verify(session.token), 401, 'invalid_token');
      expect((await verify(other.token)).statusCode).toBe(200);
      expect((await revokeBy({ session_id: session.id })).statusCode).toBe(204);
      expectError(await revokeBy({ session_id: UNKNOWN_ID }), 404, 'not_found');
    });

    it('keeps the first revocation time when revoked again', async () => {
      const session = await createSession(t, (await createIdentity(t)).id);
      await revokeBy({ session_id: session.id });
      const first = (await t.deps.store.findSessionById(session.id))?.revoked_at;
      t.clock.advance(1000);
      await revokeBy({ token: session.token });
      expect((await t.deps.store.findSessionById(session.id))?.revoked_at).toBe(first);
    });
  });

  describe('POST /v1/identities/{id}/revoke-sessions', () => {
    it('revokes every live session and counts only those that were live', async () => {
      const identity = await createIdentity(t);
      const old = await createSession(t, identity.id);
      t.clock.advance(HALF_HOUR - 1000);
      const live = [await createSession(t, identity.id), await createSession(t, identity.id)];
      const gone = await createSession(t, identity.id);
      await revokeBy({ session_id: gone.id });
      t.clock.advance(1000); // `old` has just expired
      const url = `/v1/identities/${identity.id}/revoke-sessions`;
      const res = await t.call('POST', url, revoke);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ revoked: 2 });
      for (const session of live) expectError(await verify(session.token), 401, 'invalid_token');
      expectError(await verify(old.token), 401, 'session_expired');
      expect((await t.call('POST', url, revoke)).json()).toEqual({ revoked: 0 });
    });

    it('leaves other identities alone', async () => {
      const [a, b] = [await createIdentity(t), await createIdentity(t)];
      const keep = await createSession(t, b.id);
      await createSession(t, a.id);
      const res = await t.call('POST', `/v1/identities/${a.id}/revoke-sessions`, revoke);
      expect(res.json()).toEqual({ revoked: 1 });
      expect((await verify(keep.token)).statusCode).toBe(200);
    });

    it('accepts a JSON content type with an empty body (what many clients send)', async () => {
      const identity = await createIdentity(t);
      await createSession(t, identity.id);
      const res = await t.inject({
        method: 'POST',
        url: `/v1/identities/${identity.id}/revoke-sessions`,
        headers: { authorization: `Bearer ${revoke}`, 'content-type': 'application/json' },
        payload: '',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ revoked: 1 });
    });

    it.each([UNKNOWN_ID, 'not-a-uuid'])('answers 404 for unknown identity %s', async (id) => {
      expectError(
        await t.call('POST', `/v1/identities/${id}/revoke-sessions`, revoke),
        404,
        'not_found',
      );
    });
  });
});
