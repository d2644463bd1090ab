import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { BROWSER_ACCEPT, FORM } from './helpers.js';

const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';

/** Each state-changing account route with a body its schema refuses. */
const REFUSED_BODIES: { method: 'POST' | 'PATCH' | 'DELETE'; url: string; payload: string }[] = [
  { method: 'POST', url: '/v1/account/two-factor/totp', payload: '{"unknown":1}' },
  { method: 'POST', url: '/v1/account/two-factor/totp/confirm', payload: '{}' },
  { method: 'POST', url: '/v1/account/two-factor/totp/confirm', payload: '{"code":5}' },
  { method: 'POST', url: '/v1/account/two-factor/recovery-codes', payload: '[]' },
  { method: 'POST', url: '/v1/account/two-factor/disable', payload: '"x"' },
  { method: 'POST', url: '/v1/account/passkeys/options', payload: '{"unknown":1}' },
  { method: 'POST', url: '/v1/account/passkeys', payload: '{}' },
  { method: 'PATCH', url: `/v1/account/passkeys/${UNKNOWN_ID}`, payload: '{}' },
  { method: 'PATCH', url: '/v1/account/profile', payload: '{"display_name":7}' },
  { method: 'POST', url: '/v1/account/password', payload: '{}' },
];

/**
 * Issue 22 item 11: a request without a session learns nothing about the body. The session
 * is checked first (401), as documented, whatever the body: refused by the schema, missing,
 * or not even JSON.
 */
describeEachDatabase('signed-out account changes answer 401 before the body', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t?.close());

  it('a body the route refuses: 401 without a session, not 422', async () => {
    for (const { method, url, payload } of REFUSED_BODIES) {
      const res = await t.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expectError(res, 401, 'invalid_token');
    }
  });

  it('no body, a malformed one, an unknown cookie: 401 all the same', async () => {
    for (const { method, url } of REFUSED_BODIES) {
      expectError(await t.inject({ method, url }), 401, 'invalid_token');
      const malformed = await t.inject({
        method,
        url,
        headers: { 'content-type': 'application/json' },
        payload: '{"code":',
      });
      expectError(malformed, 401, 'invalid_token');
      const unknown = await t.inject({
        method,
        url,
        headers: { 'content-type': 'application/json', cookie: 'service_session=tess_s_nope' },
        payload: '{}',
      });
      expectError(unknown, 401, 'invalid_token');
    }
    expectError(
      await t.inject({ method: 'DELETE', url: `/v1/account/passkeys/${UNKNOWN_ID}` }),
      401,
      'invalid_token',
    );
  });

  it('a signed-out form post to a two-factor action gets the "sign in first" page at 401', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/v1/account/two-factor/totp/confirm',
      headers: { 'content-type': FORM, accept: BROWSER_ACCEPT },
      payload: 'unknown=1',
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('Sign in first');
  });
});
