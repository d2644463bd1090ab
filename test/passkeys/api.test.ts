import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { sweep } from '../../src/domain/sweep.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import {
  CSRF_REFUSAL,
  RECENT_SIGN_IN_REFUSAL,
  STEP_UP_REFUSAL,
  expectError,
} from '../helpers/core.js';
import { flowRow, sessionTokenOf, startFlow } from '../flows/helpers.js';
import { ORIGIN, type PasskeyTestApp, RP_ID, createPasskeyApp } from './helpers.js';

const MINUTE = 60_000;

describeEachDatabase('passkeys through the API', (kind) => {
  let t: PasskeyTestApp;
  beforeAll(async () => {
    t = await createPasskeyApp(kind, {
      SERVICE_RATE_LIMIT_LOGIN_IP: '1000/60s',
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
      // Longer than the flow lifetime (15), so a challenge can expire inside the window.
      SERVICE_PRIVILEGED_WINDOW_MINUTES: '30',
    });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    t.clock.advance(60 * MINUTE);
    await t.deps.store.deletePasskeys(t.alice.id);
  });

  async function auditActions(identityId: string): Promise<string[]> {
    await t.deps.audit.flush();
    const rows = await t.deps.store.listAuditRecords(1000);
    return rows.filter((row) => row.target_identity === identityId).map((row) => row.action);
  }

  it('registers a passkey and signs in with it without a username: authenticated_via passkey', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    const created = await t.register(token, device, 'Laptop');
    expect(created.statusCode, created.body).toBe(201);
    const passkey = created.json();
    expect(passkey).toMatchObject({
      identity_id: t.alice.id,
      name: 'Laptop',
      device_type: 'single_device',
      backed_up: false,
      transports: ['internal'],
      last_used_at: null,
    });
    expect(Object.keys(passkey)).not.toContain('public_key');

    const signedIn = await t.passkeySignIn(device);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.json().session).toMatchObject({
      authenticated_via: 'passkey',
      aal: 'aal2',
      identity: { username: 'alice' },
    });
    const who = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      cookies: { service_session: sessionTokenOf(signedIn) },
    });
    expect(who.json()).toMatchObject({ authenticated_via: 'passkey', aal: 'aal2' });

    // The counter and the time of use are kept; the list shows them.
    const row = await t.deps.store.findPasskeyByCredentialId(
      device.credentials[0]!.id.toString('base64url'),
    );
    expect(row?.sign_count).toBe(1);
    const listed = await t.account('GET', '/v1/account/passkeys', token);
    expect(listed.statusCode).toBe(200);
    expect(listed.headers['x-csrf-token']).toBe(await t.csrfFor(token));
    expect(listed.json()).toEqual([
      { ...passkey, last_used_at: new Date(t.clock.now()).toISOString() },
    ]);
    expect(await auditActions(t.alice.id)).toContain('passkey_add');
  });

  it('a challenge serves once, only its own flow, and dies with the flow', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    expect((await t.register(token, device)).statusCode).toBe(201);

    // Foreign: an assertion for flow A's challenge, submitted to flow B.
    const a = await startFlow(t);
    const b = await startFlow(t);
    const forA = device.assert((await t.flowOptions(a)).json().options, { origin: ORIGIN });
    await t.flowOptions(b);
    expectError(await t.submitPasskey(b, forA), 401, 'invalid_credentials');
    expect((await t.deps.store.listFlowErrors(b.id)).map((row) => row.error)).toEqual([
      'invalid_credentials',
    ]);

    // Single use: flow A's challenge goes with a failed submission (here: a wrong origin),
    // so the right answer to it is refused afterwards.
    const wrongOrigin = device.assert((await t.flowOptions(a)).json().options, {
      origin: 'https://evil.example',
    });
    expectError(await t.submitPasskey(a, wrongOrigin), 401, 'invalid_credentials');
    expectError(await t.submitPasskey(a, forA), 401, 'invalid_credentials');

    // Replayed after success: the flow is done, and another flow's challenge is not its.
    const c = await startFlow(t);
    const good = device.assert((await t.flowOptions(c)).json().options, { origin: ORIGIN });
    expect((await t.submitPasskey(c, good)).statusCode).toBe(200);
    expectError(await t.submitPasskey(c, good), 401, 'invalid_token');
    const d = await startFlow(t);
    expectError(await t.submitPasskey(d, good), 401, 'invalid_credentials');
    await t.flowOptions(d);
    expectError(await t.submitPasskey(d, good), 401, 'invalid_credentials');

    // Expired with its flow.
    const e = await startFlow(t);
    const late = device.assert((await t.flowOptions(e)).json().options, { origin: ORIGIN });
    t.clock.advance(16 * MINUTE);
    expectError(await t.submitPasskey(e, late), 401, 'invalid_token');
    expectError(await t.flowOptions(e), 401, 'invalid_token');
    expect((await flowRow(t, e.id)).state).toBe('created');
    // The sweep takes the challenge with the flow.
    await sweep(t.deps.store, t.clock);
    expect(await t.deps.store.takeWebAuthnChallenge(`flow:${e.id}`, 0)).toBeUndefined();
  });

  it('refuses a wrong origin or RP id, no user verification, and an unknown credential', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    expect((await t.register(token, device)).statusCode).toBe(201);
    for (const ceremony of [
      { origin: 'https://evil.example' },
      { origin: ORIGIN, rpId: 'evil.example' },
      { origin: ORIGIN, userVerified: false },
    ]) {
      const flow = await startFlow(t);
      const credential = device.assert((await t.flowOptions(flow)).json().options, ceremony);
      expectError(await t.submitPasskey(flow, credential), 401, 'invalid_credentials');
    }
    const stranger = new SoftAuthenticator();
    stranger.register(
      { rp: { id: RP_ID }, user: { id: 'c29tZW9uZQ' }, challenge: 'AAAA' },
      { origin: ORIGIN },
    );
    expectError(await t.passkeySignIn(stranger), 401, 'invalid_credentials');
    // A foreign page cannot even ask for a challenge.
    expectError(await t.flowOptions(await startFlow(t), 'https://evil.example'), 403, 'forbidden');
  });

  it('refuses a counter that goes backwards (a cloned authenticator)', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    expect((await t.register(token, device)).statusCode).toBe(201);
    expect((await t.passkeySignIn(device)).statusCode).toBe(200);
    expect((await t.passkeySignIn(device)).statusCode).toBe(200);
    device.credentials[0]!.counter = 0;
    expectError(await t.passkeySignIn(device), 401, 'invalid_credentials');
  });

  it('registration: wrong origin, used or expired challenge, duplicate, all refused with a message', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    const options = (
      await t.account('POST', '/v1/account/passkeys/options', token, { body: {} })
    ).json().options;
    expect(options).toMatchObject({
      rp: { id: RP_ID },
      user: { name: 'alice' },
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    const evil = device.register(options, { origin: 'https://evil.example' });
    const refused = await t.account('POST', '/v1/account/passkeys', token, {
      body: { credential: evil },
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.json()).toEqual({
      error: 'validation_error',
      message: 'the passkey could not be verified: try again',
    });
    // The challenge went with that attempt.
    const again = device.register(options, { origin: ORIGIN });
    const used = await t.account('POST', '/v1/account/passkeys', token, {
      body: { credential: again },
    });
    expect(used.json()).toMatchObject({
      error: 'validation_error',
      message: /no registration in progress/,
    });
    expect((await t.account('GET', '/v1/account/passkeys', token)).json()).toEqual([]);

    // Expired: a registration challenge lives for the flow lifetime (15 minutes here).
    const fresh = await t.passwordSignIn();
    const later = (
      await t.account('POST', '/v1/account/passkeys/options', fresh, { body: {} })
    ).json().options;
    t.clock.advance(16 * MINUTE);
    const expired = await t.account('POST', '/v1/account/passkeys', fresh, {
      body: { credential: device.register(later, { origin: ORIGIN }) },
    });
    expect(expired.json()).toMatchObject({ message: /no registration in progress/ });
    // And past the privileged window, the recent sign-in rule answers first.
    t.clock.advance(15 * MINUTE);
    expectError(
      await t.account('POST', '/v1/account/passkeys', fresh, { body: { credential: {} } }),
      403,
      'forbidden',
      RECENT_SIGN_IN_REFUSAL,
    );
    const otherSession = await t.passwordSignIn();

    // A name that breaks the rule, a credential that is not one.
    const bad = await t.account('POST', '/v1/account/passkeys', otherSession, {
      body: { credential: 'nope', name: ' ' },
    });
    expect(bad.json()).toEqual({ error: 'validation_error', message: 'name must not be empty' });
    const shape = await t.account('POST', '/v1/account/passkeys', otherSession, {
      body: { credential: 'nope' },
    });
    expect(shape.json()).toMatchObject({ error: 'validation_error', message: /credential/ });
    const missing = await t.account('POST', '/v1/account/passkeys', otherSession, { body: {} });
    expect(missing.json()).toEqual({
      error: 'validation_error',
      message: 'body: missing required field credential',
    });
  });

  it('the same authenticator cannot register one credential twice', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    const first = await t.account('POST', '/v1/account/passkeys/options', token, { body: {} });
    const credential = device.register(first.json().options, { origin: ORIGIN });
    expect(
      (await t.account('POST', '/v1/account/passkeys', token, { body: { credential } })).statusCode,
    ).toBe(201);
    // A second passkey needs a session as strong as the first (docs/account.md).
    const strong = sessionTokenOf(await t.passkeySignIn(device));
    const second = await t.account('POST', '/v1/account/passkeys/options', strong, { body: {} });
    expect(second.json().options.excludeCredentials).toEqual([
      { id: credential.id, type: 'public-key', transports: ['internal'] },
    ]);
    // The same credential again (an authenticator ignoring the exclusion list).
    const dup = device.register(second.json().options, {
      origin: ORIGIN,
      reuse: device.credentials[0],
    });
    const res = await t.account('POST', '/v1/account/passkeys', strong, {
      body: { credential: dup },
    });
    expect(res.json()).toEqual({
      error: 'validation_error',
      message: 'this passkey is already registered',
    });
    expect((await t.account('GET', '/v1/account/passkeys', token)).json()).toHaveLength(1);
  });

  it('adding and deleting need the CSRF token, an own Origin and a recent sign-in', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    const passkey = (await t.register(token, device)).json();
    const path = `/v1/account/passkeys/${passkey.id}`;
    expectError(
      await t.account('DELETE', path, token, { csrf: null }),
      403,
      'forbidden',
      CSRF_REFUSAL,
    );
    expectError(
      await t.account('DELETE', path, token, { csrf: 'x'.repeat(43) }),
      403,
      'forbidden',
      CSRF_REFUSAL,
    );
    expectError(
      await t.account('DELETE', path, token, { origin: 'https://evil.example' }),
      403,
      'forbidden',
    );
    expectError(
      await t.account('DELETE', path, 'tess_s_nope', { csrf: 'x' }),
      401,
      'invalid_token',
    );

    // The password session is weaker than the passkey: it may not remove it.
    expectError(await t.account('DELETE', path, token), 403, 'forbidden', STEP_UP_REFUSAL);
    const strong = sessionTokenOf(await t.passkeySignIn(device));

    // Rename needs no recent sign-in (nor the strongest factor), but the CSRF token.
    t.clock.advance(31 * MINUTE);
    const renamed = await t.account('PATCH', path, token, { body: { name: 'Phone' } });
    expect(renamed.json()).toMatchObject({ id: passkey.id, name: 'Phone' });
    expectError(await t.account('DELETE', path, strong), 403, 'forbidden', RECENT_SIGN_IN_REFUSAL);
    expectError(
      await t.account('POST', '/v1/account/passkeys/options', strong, { body: {} }),
      403,
      'forbidden',
      RECENT_SIGN_IN_REFUSAL,
    );
    // The page offers a fresh sign-in that comes back here.
    const page = await t.inject({
      method: 'GET',
      url: '/v1/account/passkeys',
      headers: { accept: 'text/html' },
      cookies: { service_session: token },
    });
    expect(page.body).toContain(
      `/v1/login?return_to=${encodeURIComponent(`${ORIGIN}/v1/account/passkeys`)}`,
    );
    expect(page.body).toContain('Phone');

    // A fresh sign-in with the passkey may delete it; it then signs in no more.
    const fresh = sessionTokenOf(await t.passkeySignIn(device));
    expect((await t.account('DELETE', path, fresh)).statusCode).toBe(204);
    expectError(await t.account('DELETE', path, fresh), 404, 'not_found');
    expectError(await t.passkeySignIn(device), 401, 'invalid_credentials');
    expect(await auditActions(t.alice.id)).toEqual(
      expect.arrayContaining(['passkey_add', 'passkey_rename', 'passkey_delete']),
    );
  });

  it('without a session: the page sends the browser to the hosted login, JSON says 401', async () => {
    const page = await t.inject({
      method: 'GET',
      url: '/v1/account/passkeys',
      headers: { accept: 'text/html' },
    });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe(
      `/v1/login?return_to=${encodeURIComponent(`${ORIGIN}/v1/account/passkeys`)}`,
    );
    const json = await t.inject({ method: 'GET', url: '/v1/account/passkeys' });
    expectError(json, 401, 'invalid_token');
  });

  it('serves the browser library and the page scripts itself, cached for a year', async () => {
    const page = await t.inject({
      method: 'GET',
      url: '/v1/login',
      headers: { accept: 'text/html' },
    });
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]!);
    expect(scripts).toEqual([
      expect.stringMatching(/^\/v1\/assets\/webauthn\.js\?v=[\w-]{12}$/),
      expect.stringMatching(/^\/v1\/assets\/passkey-login\.js\?v=[\w-]{12}$/),
    ]);
    expect(String(page.headers['content-security-policy'])).toMatch(
      /script-src 'self'; connect-src 'self';/,
    );
    for (const url of scripts) {
      const res = await t.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const library = await t.inject({ method: 'GET', url: scripts[0]! });
    expect(library.body).toContain('SimpleWebAuthnBrowser');
    expect(library.body.startsWith('/* [@simplewebauthn/browser@14.0.0] */')).toBe(true);
  });

  it('bad assertions are validation errors with a message, counted nowhere', async () => {
    const flow = await startFlow(t);
    for (const [credential, message] of [
      [undefined, 'credential (the passkey assertion) is required'],
      ['x', 'credential must be an object'],
      [{ type: 'public-key', id: 'abc', rawId: 'abc', response: {} }, /clientDataJSON/],
      [{ type: 'password' }, 'credential.type must be public-key'],
      [
        {
          type: 'public-key',
          id: 'a b',
          rawId: 'abc',
          response: { clientDataJSON: 'a', authenticatorData: 'a', signature: 'a' },
        },
        'credential.id must be a base64url string',
      ],
    ] as const) {
      const res = await t.submitPasskey(flow, credential);
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ error: 'validation_error', message });
    }
    expect((await flowRow(t, flow.id)).failed_attempts).toBe(0);
    const options = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/passkey/options`,
      payload: { csrf_token: flow.csrf_token, extra: 1 },
    });
    expect(options.json()).toEqual({
      error: 'validation_error',
      message: 'body: unknown field extra',
    });
    expectError(
      await t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/passkey/options`,
        payload: { csrf_token: 'wrong' },
      }),
      401,
      'invalid_token',
    );
  });

  it('a disabled identity: identity_disabled, only after the passkey verified', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    expect((await t.register(token, device)).statusCode).toBe(201);
    const actor = { service_name: 'test', service_id: null };
    await setIdentityState(t.deps, actor, t.alice.id, 'disabled');
    try {
      expectError(await t.passkeySignIn(device), 403, 'identity_disabled');
      // A wrong assertion stays invalid_credentials: the state is told only after proof.
      const flow = await startFlow(t);
      const wrong = device.assert((await t.flowOptions(flow)).json().options, {
        origin: 'https://evil.example',
      });
      expectError(await t.submitPasskey(flow, wrong), 401, 'invalid_credentials');
    } finally {
      await setIdentityState(t.deps, actor, t.alice.id, 'active');
    }
  });

  it('operators list and reset passkeys with the grants, audited', async () => {
    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    const passkey = (await t.register(token, device)).json();
    const reader = await t.token('identity_read');
    const resetter = await t.token('direct_auth');
    const url = `/v1/identities/${t.alice.id}/passkeys`;

    const listed = await t.call('GET', url, reader);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toContainEqual(passkey);
    expectError(await t.call('GET', url, resetter), 403, 'forbidden', /identity_read grant/);
    expectError(await t.call('GET', url, null), 401, 'missing_service_token');
    expectError(await t.call('DELETE', url, reader), 403, 'forbidden', /direct_auth grant/);
    expectError(
      await t.call('GET', '/v1/identities/00000000-0000-4000-8000-000000000000/passkeys', reader),
      404,
      'not_found',
    );
    expectError(await t.call('GET', '/v1/identities/nope/passkeys', reader), 404, 'not_found');

    const one = await t.call('DELETE', `${url}/${passkey.id}`, resetter);
    expect(one.statusCode).toBe(204);
    expectError(await t.call('DELETE', `${url}/${passkey.id}`, resetter), 404, 'not_found');
    expectError(await t.call('DELETE', `${url}/not-a-uuid`, resetter), 404, 'not_found');

    const second = new SoftAuthenticator();
    expect((await t.register(await t.passwordSignIn(), second)).statusCode).toBe(201);
    const reset = await t.call('DELETE', url, resetter);
    expect(reset.statusCode).toBe(200);
    expect(reset.json().removed).toBeGreaterThanOrEqual(1);
    expect((await t.call('GET', url, reader)).json()).toEqual([]);
    expectError(await t.passkeySignIn(second), 401, 'invalid_credentials');
    await t.deps.audit.flush();
    const rows = await t.deps.store.listAuditRecords(1000);
    const resetRow = rows.find((row) => row.action === 'passkeys_reset');
    expect(resetRow).toMatchObject({ target_identity: t.alice.id, outcome: 'ok' });
    expect(JSON.parse(resetRow!.details)).toMatchObject({ removed: reset.json().removed });
  });
});
