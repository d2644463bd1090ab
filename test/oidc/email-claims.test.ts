import * as rp from 'openid-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityEmail } from '../../src/domain/identities/identity-email.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { addClient, addUser, PASSWORD, startOidcApp, type OidcApp } from './helpers.js';
import { authorizeSignedIn } from './http-flow.js';
import { redeem, relyingParty } from './relying-party.js';

const ACTOR = { service_name: 'oidc-tests', service_id: null };
const CALLBACK = 'https://app.example/callback';

/**
 * The `email` scope (OpenID Connect Core 5.4): `email` and `email_verified` in the ID token
 * and at the userinfo endpoint, as openid-client, a real relying party, reads them; none
 * without the scope or without an address.
 */
describeEachDatabase('OIDC email claims', (kind) => {
  let t: OidcApp;
  let config: rp.Configuration;

  beforeAll(async () => {
    t = await startOidcApp(kind);
    const created = await addClient(t, {
      name: 'Mail app',
      redirectUris: [CALLBACK],
      firstParty: true,
    });
    config = await relyingParty(t.issuer, created.client.client_id, created.client_secret);
  });
  afterAll(() => t?.close());

  async function signIn(username: string, scope: string) {
    const direct = await t.token('direct_auth');
    const signedIn = await t.call('POST', '/v1/authenticate/password', direct, {
      username,
      password: PASSWORD,
    });
    const session = (signedIn.json() as { token: string }).token;
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, session, scope);
    return redeem(config, auth, landedOn);
  }

  it('discovery lists the email scope and its claims', () => {
    const metadata = config.serverMetadata();
    expect(metadata.scopes_supported).toContain('email');
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['email', 'email_verified']));
  });

  it('with the scope: the address and whether it is verified, in the ID token and userinfo', async () => {
    const user = await addUser(t, 'erin');
    await setIdentityEmail(t.deps, ACTOR, user.id, { email: 'Erin@Example.COM', verified: true });
    const tokens = await signIn('erin', 'openid email');
    expect(tokens.claims()).toMatchObject({
      sub: user.id,
      email: 'erin@example.com',
      email_verified: true,
    });
    // Only what the scopes asked for: no profile claims.
    expect(tokens.claims()).not.toHaveProperty('preferred_username');
    const info = await rp.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toMatchObject({ sub: user.id, email: 'erin@example.com', email_verified: true });

    // Unverified now: the next sign-in says so.
    await setIdentityEmail(t.deps, ACTOR, user.id, { email: 'erin@example.com', verified: false });
    const again = await signIn('erin', 'openid email profile');
    expect(again.claims()).toMatchObject({
      email: 'erin@example.com',
      email_verified: false,
      preferred_username: 'erin',
    });
  });

  it('without the scope, or without an address, no email claims', async () => {
    const user = await addUser(t, 'fay');
    await setIdentityEmail(t.deps, ACTOR, user.id, { email: 'fay@example.com', verified: true });
    const profileOnly = await signIn('fay', 'openid profile');
    expect(profileOnly.claims()).toMatchObject({ preferred_username: 'fay' });
    expect(profileOnly.claims()).not.toHaveProperty('email');
    expect(profileOnly.claims()).not.toHaveProperty('email_verified');
    const info = await rp.fetchUserInfo(config, profileOnly.access_token, user.id);
    expect(info).not.toHaveProperty('email');

    const none = await addUser(t, 'gus');
    const tokens = await signIn('gus', 'openid email');
    expect(tokens.claims()?.sub).toBe(none.id);
    expect(tokens.claims()).not.toHaveProperty('email');
    expect(tokens.claims()).not.toHaveProperty('email_verified');
  });
});
