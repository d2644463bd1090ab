import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  confirmTotpEnrolment,
  startTotpEnrolment,
} from '../../src/domain/second-factor/enrolment.js';
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
import {
  addClient,
  addUser,
  freePort,
  PASSWORD,
  startOidcApp,
  type OidcApp,
} from '../oidc/helpers.js';
import { totpCode } from '../second-factor/helpers.js';
import { startDownstream, UPSTREAM_SECRET_ENV, type Downstream } from './helpers.js';

const ACTOR = { service_name: 'provider-tests', service_id: null };

async function upstreamPasswordStep(page: Page, username: string) {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/**
 * A second Tessera, its OpenID Connect provider on, is the upstream: the user signs in
 * there through the downstream's hosted page. `instances` 2: the provider's redirect to
 * the callback is answered by another downstream instance on the same PostgreSQL schema,
 * as behind a load balancer.
 */
function providerSignInSuite(kind: DatabaseKind, instances: 1 | 2) {
  let upstream: OidcApp;
  let db: TestDatabase;
  let front: Downstream;
  let back: Downstream;
  let browser: Browser;
  let tabs: TabPool;
  let aliceUpstreamId: string;

  beforeAll(async () => {
    upstream = await startOidcApp('sqlite');
    aliceUpstreamId = (await addUser(upstream, 'alice')).id;
    await addUser(upstream, 'bob');
    await addUser(upstream, 'carol');
    await addUser(upstream, 'dave');
    const frontPort = await freePort();
    const { client, client_secret } = await addClient(upstream, {
      name: 'Downstream',
      redirectUris: [`http://localhost:${frontPort}/v1/providers/corp/callback`],
      firstParty: true,
    });
    const providers = [
      {
        id: 'corp',
        type: 'oidc',
        label: 'Corp SSO',
        issuer: upstream.issuer,
        client_id: client.client_id,
        client_secret_env: UPSTREAM_SECRET_ENV,
      },
    ];
    const env = { [UPSTREAM_SECRET_ENV]: client_secret!, SERVICE_REGISTRATION: 'open' };
    db = await createTestDatabase(kind);
    front = await startDownstream(kind, providers, env, { db, port: frontPort });
    back = instances === 2 ? await startDownstream(kind, providers, env, { db }) : front;
    browser = await sharedChromium();
    tabs = new TabPool(browser);
  });
  afterAll(async () => {
    await releaseChromium(browser);
    if (back !== front) await back?.close();
    await front?.close();
    await db?.drop();
    await upstream?.close();
  });

  /**
   * The browser's way in: the downstream's hosted page (the login page, or the sign-up
   * page's "Sign up with" button), the provider's button, the upstream's page.
   */
  async function signInThroughUpstream(
    page: Page,
    username: string,
    signedInUpstream = false,
    from: 'login' | 'registration' = 'login',
  ) {
    if (back !== front) {
      // The load balancer: the provider's redirect lands on the other instance.
      await page.route(/\/v1\/providers\/corp\/callback/, (route) => {
        const url = new URL(route.request().url());
        url.port = String(back.port);
        return route.continue({ url: url.href });
      });
    }
    await page.goto(`${front.origin}/v1/${from}`);
    const verb = from === 'login' ? 'Sign in' : 'Sign up';
    await page.getByRole('button', { name: `${verb} with Corp SSO` }).click();
    if (!signedInUpstream) {
      await page.waitForURL((url) => url.host === new URL(upstream.origin).host);
      await upstreamPasswordStep(page, username);
    }
    await page.waitForURL(
      (url) => url.host === new URL(front.origin).host || url.port === String(back.port),
    );
  }

  it('signs a new user in through the upstream, with a verified link, and reuses the identity next time', async () => {
    const { context, page, close } = await tabs.open();
    await signInThroughUpstream(page, 'alice');
    await page.waitForSelector('h1:text("Signed in")');
    const link = await front.deps.store.findLink('corp', aliceUpstreamId);
    expect(link?.verified_at).not.toBeNull();
    const identity = (await front.deps.store.findIdentityById(link!.identity_id))!;
    expect(identity).toMatchObject({
      username: 'alice',
      display_name: 'Alice Example',
      password_hash: null,
    });
    expect(await page.locator('main').textContent()).toContain('Alice Example');
    const whoami = await (await context.request.get(`${front.origin}/v1/whoami`)).json();
    expect(whoami).toMatchObject({
      authenticated_via: 'provider',
      aal: 'aal1',
      identity: { id: identity.id },
    });

    // Signed out downstream (a new browser), signed in again: the same identity.
    const { context: second, page: again, close: closeSecond } = await tabs.open();
    await signInThroughUpstream(again, 'alice');
    await again.waitForSelector('h1:text("Signed in")');
    const whoamiAgain = await (await second.request.get(`${front.origin}/v1/whoami`)).json();
    expect(whoamiAgain).toMatchObject({ identity: { id: identity.id, username: 'alice' } });
    expect((await front.deps.store.listLinks(identity.id)).length).toBe(1);
    await close();
    await closeSecond();
  }, 90_000);

  it('signs a new user up from the sign-up page’s button, and signs in a known one there', async () => {
    const { context, page, close } = await tabs.open();
    await signInThroughUpstream(page, 'dave', false, 'registration');
    await page.waitForSelector('h1:text("Signed in")');
    const dave = (await front.deps.store.findIdentityByUsername('dave'))!;
    expect(dave).toMatchObject({ password_hash: null });
    const links = await front.deps.store.listLinks(dave.id);
    expect(links).toMatchObject([{ provider: 'corp', identity_id: dave.id }]);
    expect(links[0]!.verified_at).not.toBeNull();
    const whoami = await (await context.request.get(`${front.origin}/v1/whoami`)).json();
    expect(whoami).toMatchObject({ authenticated_via: 'provider', identity: { id: dave.id } });
    await close();

    // The same button for an account already here signs it in: no second identity.
    const { context: again, page: next, close: closeAgain } = await tabs.open();
    await signInThroughUpstream(next, 'dave', false, 'registration');
    await next.waitForSelector('h1:text("Signed in")');
    const second = await (await again.request.get(`${front.origin}/v1/whoami`)).json();
    expect(second).toMatchObject({ identity: { id: dave.id } });
    expect(await front.deps.store.listLinks(dave.id)).toHaveLength(1);
    await closeAgain();
  }, 90_000);

  it('asks a user with an authenticator app for its code after the provider', async () => {
    const { page, close } = await tabs.open();
    await signInThroughUpstream(page, 'bob');
    await page.waitForSelector('h1:text("Signed in")');
    const identity = (await front.deps.store.findIdentityByUsername('bob'))!;
    const enrolment = await startTotpEnrolment(front.deps, ACTOR, identity, 'Tessera');
    await confirmTotpEnrolment(
      front.deps,
      ACTOR,
      identity,
      await totpCode(enrolment.secret, front.clock.now()),
    );
    await close();

    const { context: fresh, page: next, close: closeFresh } = await tabs.open();
    await signInThroughUpstream(next, 'bob');
    // The flow waits in second_factor_required: no session yet.
    await next.getByLabel(/code/i).first().waitFor();
    expect((await fresh.request.get(`${front.origin}/v1/whoami`)).status()).toBe(401);
    front.clock.advance(30_000);
    back.clock.advance(back === front ? 0 : 30_000);
    await next
      .getByLabel(/code/i)
      .first()
      .fill(await totpCode(enrolment.secret, front.clock.now()));
    await next
      .getByRole('button', { name: /verify|continue|sign in/i })
      .first()
      .click();
    await next.waitForSelector('h1:text("Signed in")');
    const session = await (await fresh.request.get(`${front.origin}/v1/whoami`)).json();
    expect(session).toMatchObject({ authenticated_via: 'provider', aal: 'aal2' });
    await closeFresh();
  }, 90_000);

  it('connects the provider from the account page and disconnects it; the last way in stays', async () => {
    const carol = await registerIdentity(front.deps, ACTOR, {
      username: 'carol',
      password: PASSWORD,
      display_name: 'Carol Down',
    });
    const { page, close } = await tabs.open();
    await page.goto(`${front.origin}/v1/account/connections`);
    await upstreamPasswordStep(page, 'carol');
    await page.waitForSelector('h1:text("Connected accounts")');
    if (back !== front) {
      await page.route(/\/v1\/providers\/corp\/callback/, (route) => {
        const url = new URL(route.request().url());
        url.port = String(back.port);
        return route.continue({ url: url.href });
      });
    }
    await page.getByRole('button', { name: 'Connect Corp SSO' }).click();
    await page.waitForURL((url) => url.host === new URL(upstream.origin).host);
    await upstreamPasswordStep(page, 'carol');
    await page.waitForSelector('button:text("Disconnect Corp SSO")');
    const links = await front.deps.store.listLinks(carol.id);
    expect(links).toMatchObject([{ provider: 'corp', identity_id: carol.id }]);
    expect(links[0]!.verified_at).not.toBeNull();

    await page.getByRole('button', { name: 'Disconnect Corp SSO' }).click();
    await page.waitForSelector('button:text("Connect Corp SSO")');
    expect(await front.deps.store.listLinks(carol.id)).toEqual([]);
    await close();

    // Alice signed up through the provider: it is her only way in, so it stays.
    const { page: own, close: closeAlice } = await tabs.open();
    await signInThroughUpstream(own, 'alice');
    await own.waitForSelector('h1:text("Signed in")');
    await own.goto(`${front.origin}/v1/account/connections`);
    await own.getByRole('button', { name: 'Disconnect Corp SSO' }).click();
    await own.waitForSelector('text=This is your only way to sign in');
    const aliceId = (await front.deps.store.findIdentityByUsername('alice'))!.id;
    expect(await front.deps.store.listLinks(aliceId)).toHaveLength(1);
    await closeAlice();
  }, 90_000);
}

describeInChromium('provider sign-in, upstream Tessera, SQLite', () =>
  providerSignInSuite('sqlite', 1),
);
if (postgresAvailable) {
  describeInChromium('provider sign-in, upstream Tessera, two instances on PostgreSQL', () =>
    providerSignInSuite('postgres', 2),
  );
}
