import { mkdirSync } from 'node:fs';
import * as rp from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAppSite, type AppSite } from '../browser/pages.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  TabPool,
} from '../helpers/chromium.js';
import {
  createTestDatabase,
  postgresAvailable,
  type DatabaseKind,
  type TestDatabase,
} from '../helpers/databases.js';
import { addClient, addUser, PASSWORD, startOidcApp, type OidcApp } from './helpers.js';
import { jwtHeader, redeem, relyingParty, startAuthorization } from './relying-party.js';

const SCREENSHOTS = 'test-results';

async function signIn(page: Page, username = 'alice') {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * The whole authorization code + PKCE flow with openid-client as the relying party and
 * Chromium as the user's browser. `instances` 2: a second Tessera on the same database
 * answers every back-channel call (token, userinfo, refresh, revocation), as behind a load
 * balancer, so codes and tokens issued by one instance are redeemed at the other.
 */
function oidcFlowSuite(kind: DatabaseKind, instances: 1 | 2) {
  let db: TestDatabase;
  let front: OidcApp;
  let back: OidcApp;
  let site: AppSite;
  let browser: Browser;
  let tabs: TabPool;
  let identityId: string;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    front = await startOidcApp(kind, { db });
    back =
      instances === 2
        ? await startOidcApp(kind, { db, issuerPort: Number(new URL(front.origin).port) })
        : front;
    site = await startAppSite('App');
    identityId = (await addUser(front)).id;
    browser = await sharedChromium();
    tabs = new TabPool(browser);
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await site?.close();
    if (back !== front) await back?.close();
    await front?.close();
    await db?.drop();
  });

  const backHost = () => (back === front ? undefined : new URL(back.origin).host);

  it('signs in through the hosted page, and the RP gets verified tokens, userinfo, refresh, revocation and logout', async () => {
    const callback = `${site.origin}/callback`;
    const signedOut = `${site.origin}/signed-out`;
    const { client, client_secret } = await addClient(front, {
      name: 'Dashboard',
      redirectUris: [callback],
      postLogoutRedirectUris: [signedOut],
      firstParty: true,
    });
    const config = await relyingParty(front.issuer, client.client_id, client_secret, {
      tokenHost: backHost(),
    });
    const { context, page, close } = await tabs.open();

    const auth = await startAuthorization(config, callback);
    await page.goto(auth.url.href);
    // Not signed in: the interaction sends the browser to Tessera's own login page.
    expect(new URL(page.url()).pathname).toBe('/v1/login');
    expect(await page.title()).toBe('Sign in · Tessera');
    await page.screenshot({ path: `${SCREENSHOTS}/oidc-login.png`, fullPage: true });
    await signIn(page);
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect(await page.locator('h1').textContent()).toBe('App /callback');

    const tokens = await redeem(config, auth, page.url());
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({
      iss: front.issuer,
      sub: identityId,
      aud: client.client_id,
      preferred_username: 'alice',
      name: 'Alice Example',
      picture: 'https://img.example/alice.png',
      acr: 'aal1',
      amr: ['pwd'],
      nonce: auth.nonce,
    });
    // Signed by the key the JWKS publishes (openid-client checked the signature against it).
    const jwks = (await (await fetch(`${front.issuer}/jwks`)).json()) as {
      keys: { kid: string }[];
    };
    expect(jwks.keys.map((key) => key.kid)).toContain(jwtHeader(tokens.id_token!).kid);
    expect(jwtHeader(tokens.id_token!).alg).toBe('RS256');
    expect(tokens.refresh_token).toBeTruthy();

    const userinfo = await rp.fetchUserInfo(config, tokens.access_token, identityId);
    expect(userinfo).toMatchObject({
      sub: identityId,
      preferred_username: 'alice',
      name: 'Alice Example',
    });

    // Refresh rotates: the new pair works and the old refresh token is spent.
    const refreshed = await rp.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.claims()?.sub).toBe(identityId);
    const active = await rp.tokenIntrospection(config, refreshed.access_token);
    expect(active).toMatchObject({ active: true, sub: identityId, client_id: client.client_id });
    // Replaying the spent refresh token is refused and ends the whole grant (a stolen
    // refresh token used by two parties betrays itself): the new tokens die with it.
    await expect(rp.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await rp.tokenIntrospection(config, refreshed.access_token)).toEqual({ active: false });
    await expect(rp.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    // A second authorization in the same browser: already signed in, not asked again.
    const again = await startAuthorization(config, callback);
    await page.goto(again.url.href);
    await page.waitForURL((url) => url.href.startsWith(callback));
    const second = await redeem(config, again, page.url());
    expect(second.claims()?.sub).toBe(identityId);

    // Revocation: the access token, then the refresh token (which ends its grant).
    expect(await rp.tokenIntrospection(config, second.access_token)).toMatchObject({
      active: true,
    });
    await rp.tokenRevocation(config, second.access_token);
    expect(await rp.tokenIntrospection(config, second.access_token)).toEqual({ active: false });
    await expect(rp.fetchUserInfo(config, second.access_token, identityId)).rejects.toMatchObject({
      status: 401,
    });
    await rp.tokenRevocation(config, second.refresh_token!);
    await expect(rp.refreshTokenGrant(config, second.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    // RP-initiated logout: confirm on Tessera's page, back to the application, signed out.
    await page.goto(
      rp.buildEndSessionUrl(config, {
        id_token_hint: second.id_token!,
        post_logout_redirect_uri: signedOut,
      }).href,
    );
    expect(await page.title()).toBe('Sign out · Tessera');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(signedOut);
    expect((await context.cookies(front.origin)).map((cookie) => cookie.name)).not.toContain(
      'service_session',
    );

    // Signed out of Tessera too: the next authorization asks for the password again.
    const third = await startAuthorization(config, callback);
    await page.goto(third.url.href);
    expect(new URL(page.url()).pathname).toBe('/v1/login');
    await close();
  });

  it('asks a third-party application for consent once, and honours a denial', async () => {
    const callback = `${site.origin}/third-party`;
    const { client } = await addClient(front, {
      name: 'Wiki by Someone',
      redirectUris: [callback],
      public: true,
    });
    const config = await relyingParty(front.issuer, client.client_id, null, {
      tokenHost: backHost(),
    });
    const { page, close } = await tabs.open();

    const denied = await startAuthorization(config, callback, 'openid profile');
    await page.goto(denied.url.href);
    await signIn(page);
    await page.getByRole('button', { name: 'Deny' }).waitFor();
    expect(await page.title()).toBe('Allow access · Tessera');
    expect(await page.locator('main').textContent()).toContain('Wiki by Someone');
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');

    const allowed = await startAuthorization(config, callback, 'openid profile');
    await page.goto(allowed.url.href);
    await page.screenshot({ path: `${SCREENSHOTS}/oidc-consent.png`, fullPage: true });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    const tokens = await redeem(config, allowed, page.url());
    expect(tokens.claims()?.sub).toBe(identityId);

    // Asked once: the next request goes straight through.
    const later = await startAuthorization(config, callback, 'openid profile');
    await page.goto(later.url.href);
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect((await redeem(config, later, page.url())).claims()?.sub).toBe(identityId);
    await close();
  });
}

describeInChromium('OpenID Connect in a real browser', () => {
  describe('[sqlite]', () => oidcFlowSuite('sqlite', 1));
  if (postgresAvailable) describe('[postgres, two instances]', () => oidcFlowSuite('postgres', 2));
  else
    describe.skip('[postgres, two instances] (skipped: SERVICE_TEST_DATABASE_URL not set)', () =>
      undefined);
});
