import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';

describeEachDatabase('README walkthrough', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t?.close());

  it('registers, authenticates, verifies and revokes', async () => {
    const token = await t.token('direct_auth', 'introspect', 'revoke');
    const registered = await t.call('POST', '/v1/register', token, {
      username: 'Alice',
      password: 'correct horse battery',
    });
    expect(registered.statusCode).toBe(201);
    expect(registered.json()).toMatchObject({ username: 'alice', display_name: 'alice' });

    const auth = await t.call('POST', '/v1/authenticate/password', token, {
      username: 'ALICE',
      password: 'correct horse battery',
    });
    expect(auth.statusCode).toBe(200);
    const { token: sessionToken, session } = auth.json();
    expect(sessionToken).toMatch(/^tess_s_[A-Za-z0-9_-]{43}$/);
    expect(session.authenticated_via).toBe('password');

    const verified = await t.call('POST', '/v1/sessions/verify', token, { token: sessionToken });
    expect(verified.statusCode).toBe(200);
    expect(verified.json().id).toBe(session.id);

    const revoked = await t.call('POST', '/v1/sessions/revoke', token, { token: sessionToken });
    expect(revoked.statusCode).toBe(204);
    const after = await t.call('POST', '/v1/sessions/verify', token, { token: sessionToken });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: 'invalid_token' });
  });
});
