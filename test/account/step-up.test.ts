import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STEP_UP_REFUSAL, expectError } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import {
  BROWSER_ACCEPT,
  FORM,
  LOOSE_SIGN_IN_LIMITS,
  PASSWORD,
  sessionTokenOf,
} from '../flows/helpers.js';
import { ORIGIN, type PasskeyTestApp, createPasskeyApp } from '../passkeys/helpers.js';
import {
  accountPost,
  accountStatus,
  cookieOf,
  enrolledIdentity,
  signInWithCode,
} from '../second-factor/helpers.js';
import { NEW_PASSWORD, passwordWorks } from './helpers.js';

let counter = 0;
const newName = () => `step-up-${++counter}`;

/**
 * Issue 22 item 5: while an identity has a second factor or a passkey, a weaker (aal1)
 * session changes no credential; it is told to sign in again with that factor, and can.
 */
describeEachDatabase('credential changes need the strongest factor', (kind) => {
  let t: PasskeyTestApp;
  let linker: string;
  let linkAdmin: string;
  let direct: string;
  let introspect: string;
  beforeAll(async () => {
    t = await createPasskeyApp(kind, {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_PRIVILEGED_WINDOW_MINUTES: '15',
    });
    linker = await t.token('external_auth');
    linkAdmin = await t.token('external_link');
    direct = await t.token('direct_auth');
    introspect = await t.token('introspect');
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  /** An identity with TOTP and a verified link; a fresh link sign-in of it (aal1). */
  async function linkSignedIn() {
    const enrolled = await enrolledIdentity(t, newName());
    const pair = { provider: 'mail', subject: `${enrolled.username}@example.com` };
    const attached = await t.call(
      'POST',
      `/v1/identities/${enrolled.identity.id}/links`,
      linkAdmin,
      { ...pair, verified: true },
    );
    expect(attached.statusCode, attached.body).toBe(201);
    const signedIn = await t.call('POST', '/v1/authenticate/link', linker, pair);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.json().session).toMatchObject({ authenticated_via: 'link', aal: 'aal1' });
    return { ...enrolled, link: signedIn.json().token as string };
  }

  function accountJson(
    session: string,
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    csrf: string,
    payload?: object,
  ): Promise<LightMyRequestResponse> {
    return t.inject({
      method,
      url,
      headers: { ...cookieOf(session), 'x-csrf-token': csrf },
      ...(payload === undefined ? {} : { payload }),
    });
  }

  it('a link sign-in of an identity with TOTP is aal1: it removes and changes no credential', async () => {
    const { username, identity, link, secret } = await linkSignedIn();
    const { csrf_token: csrf } = await accountStatus(t, link);

    for (const path of ['/disable', '/recovery-codes', '/totp']) {
      expectError(await accountPost(t, link, path), 403, 'forbidden', STEP_UP_REFUSAL);
    }
    expectError(
      await accountPost(t, link, '/totp/confirm', { code: '123456' }),
      403,
      'forbidden',
      STEP_UP_REFUSAL,
    );
    // No new passkey either: it would sign in at aal2 and then remove the TOTP.
    expectError(
      await accountJson(link, 'POST', '/v1/account/passkeys/options', csrf, {}),
      403,
      'forbidden',
      STEP_UP_REFUSAL,
    );
    // A password without the current one is a credential change too.
    expectError(
      await accountJson(link, 'POST', '/v1/account/password', csrf, {
        new_password: NEW_PASSWORD,
      }),
      403,
      'forbidden',
      STEP_UP_REFUSAL,
    );
    expect(await passwordWorks(t, direct, username, PASSWORD)).toBe(false); // needs a code
    expect(await t.deps.store.findTotpFactor(identity.id)).toMatchObject({
      confirmed_at: expect.any(Number),
    });
    expect(await accountStatus(t, link)).toMatchObject({ enabled: true, recovery_codes_left: 10 });

    // What is not a credential still works, and the profile says a step-up is needed.
    const profile = await accountJson(link, 'PATCH', '/v1/account/profile', csrf, {
      display_name: 'Still me',
    });
    expect(profile.statusCode, profile.body).toBe(200);
    const about = await accountJson(link, 'GET', '/v1/account/profile', csrf);
    expect(about.json()).toMatchObject({ step_up_required: true, recent_sign_in_until: null });

    // The step-up: a login flow with the password and a code gives aal2, which may.
    const strong = await signInWithCode(t, username, secret);
    const strongCsrf = (await accountStatus(t, strong)).csrf_token;
    const strongAbout = await accountJson(strong, 'GET', '/v1/account/profile', strongCsrf);
    expect(strongAbout.json()).toMatchObject({
      step_up_required: false,
      recent_sign_in_until: expect.any(String),
    });
    const off = await accountPost(t, strong, '/disable');
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ enabled: false });
    // Without a second factor, the link session is the strongest there is again.
    expect((await accountPost(t, link, '/totp')).statusCode).toBe(200);

    // Both sessions in the service's list, as Session objects with their assurance.
    const rows = (await t.call('GET', `/v1/identities/${identity.id}/sessions`, introspect)).json();
    const byId = new Map((rows as { id: string }[]).map((row) => [row.id, row]));
    const linkId = (
      await t.inject({ method: 'GET', url: '/v1/whoami', headers: cookieOf(link) })
    ).json().id as string;
    expect(byId.get(linkId)).toMatchObject({
      authenticated_via: 'link',
      aal: 'aal1',
      identity: { id: identity.id, username },
      identity_id: identity.id,
    });
    expect(byId.get(strongAbout.json().session_id)).toMatchObject({
      authenticated_via: 'password',
      aal: 'aal2',
      identity: { id: identity.id },
    });
  });

  it('with the current password an aal1 session still changes the password: no factor goes', async () => {
    const { username, link } = await linkSignedIn();
    const { csrf_token: csrf } = await accountStatus(t, link);
    const res = await accountJson(link, 'POST', '/v1/account/password', csrf, {
      current_password: PASSWORD,
      new_password: NEW_PASSWORD,
      revoke_other_sessions: false,
    });
    expect(res.statusCode, res.body).toBe(204);
    // The new password signs in, and the second factor is still asked for.
    const code = await t.call('POST', '/v1/authenticate/password', direct, {
      username,
      password: NEW_PASSWORD,
    });
    expectError(code, 403, 'forbidden', /totp_code/);
  });

  it('a password session beside a passkey adds or removes none, nor enrols TOTP; the passkey may', async () => {
    await t.deps.store.deletePasskeys(t.alice.id);
    const password = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    // The first passkey: nothing stronger exists yet.
    const first = await t.register(password, device, 'Phone');
    expect(first.statusCode, first.body).toBe(201);
    const path = `/v1/account/passkeys/${first.json().id}`;

    expectError(
      await t.account('POST', '/v1/account/passkeys/options', password, { body: {} }),
      403,
      'forbidden',
      STEP_UP_REFUSAL,
    );
    expectError(await t.account('DELETE', path, password), 403, 'forbidden', STEP_UP_REFUSAL);
    expectError(
      await t.account('POST', '/v1/account/two-factor/totp', password, { body: {} }),
      403,
      'forbidden',
      STEP_UP_REFUSAL,
    );
    // Renaming is no credential change.
    const renamed = await t.account('PATCH', path, password, { body: { name: 'Old phone' } });
    expect(renamed.statusCode, renamed.body).toBe(200);

    const signedIn = await t.passkeySignIn(device);
    expect(signedIn.json().session).toMatchObject({ authenticated_via: 'passkey', aal: 'aal2' });
    const strong = sessionTokenOf(signedIn);
    expect((await t.account('DELETE', path, strong)).statusCode).toBe(204);
    expect(await t.deps.store.listPasskeys(t.alice.id)).toEqual([]);
  });

  describe('the hosted pages offer the step-up instead of a form that would be refused', () => {
    const page = (session: string, url: string) =>
      t.inject({ method: 'GET', url, headers: { ...cookieOf(session), accept: BROWSER_ACCEPT } });
    const loginBackTo = (path: string) =>
      `/v1/login?return_to=${encodeURIComponent(`${ORIGIN}${path}`)}`;

    it('two-factor page: the link to sign in again, no form that changes it', async () => {
      const { link } = await linkSignedIn();
      const res = await page(link, '/v1/account/two-factor');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('id="step-up-link"');
      expect(res.body).toContain(
        `href="${loginBackTo('/v1/account/two-factor').replaceAll('&', '&amp;')}"`,
      );
      expect(res.body).not.toContain('action="/v1/account/two-factor/disable"');
      expect(res.body).not.toContain('action="/v1/account/two-factor/recovery-codes"');

      // A form post that was on the page before the identity's second factor: refused with
      // the same prompt, nothing changed.
      const { csrf_token: csrf } = await accountStatus(t, link);
      const post = await t.inject({
        method: 'POST',
        url: '/v1/account/two-factor/disable',
        headers: { ...cookieOf(link), 'content-type': FORM, accept: BROWSER_ACCEPT },
        payload: `csrf_token=${encodeURIComponent(csrf)}`,
      });
      expect(post.statusCode).toBe(403);
      expect(post.headers['content-type']).toMatch(/^text\/html/);
      expect(post.body).toMatch(STEP_UP_REFUSAL);
      expect(post.body).toContain('id="step-up-link"');
      expect(await accountStatus(t, link)).toMatchObject({ enabled: true });
    });

    it('account page: the password needs the current one or a sign-in with the factor', async () => {
      const { link } = await linkSignedIn();
      const res = await page(link, '/v1/account');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('id="step-up-link"');
      expect(res.body).toContain(loginBackTo('/v1/account').replaceAll('&', '&amp;'));
      // The current password is asked for, not waived by the recent (link) sign-in.
      expect(res.body).toMatch(/id="current_password"[^>]* required/);
      expect(res.body).not.toContain('You signed in recently');
    });

    it('passkeys page: the sign-in link in place of the add form', async () => {
      const { link } = await linkSignedIn();
      const res = await page(link, '/v1/account/passkeys');
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('id="step-up"');
      expect(res.body).not.toContain('id="add-passkey"');
    });
  });
});
