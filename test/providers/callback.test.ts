import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import {
  createTestDatabase,
  describeEachDatabase,
  describeOnPostgres,
  type DatabaseKind,
  type TestDatabase,
} from '../helpers/databases.js';
import { sessionTokenOf, startFlow, submit } from '../flows/helpers.js';
import { auditEntries } from '../helpers/core.js';
import { startDownstream, type Downstream } from './helpers.js';
import {
  startFakeGitHub,
  startFakeIssuer,
  type FakeGitHub,
  type FakeIssuer,
} from './fake-upstreams.js';

const ACTOR = { service_name: 'provider-tests', service_id: null };
const HTML = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';
const APP = 'https://app.example';

interface Started {
  flowId: string;
  url: string;
  browser: string;
  state: string;
}

/**
 * The browser's part, by HTTP: a login flow, the provider's button (JSON, as an operator's
 * own UI would), and the binding cookie the answer sets.
 */
async function start(t: Downstream, provider: string, browser?: string): Promise<Started> {
  const flow = (
    await t.inject({ method: 'GET', url: '/v1/login', headers: { accept: 'application/json' } })
  ).json() as {
    id: string;
    csrf_token: string;
  };
  const res = await t.inject({
    method: 'POST',
    url: `/v1/flows/${flow.id}/provider`,
    payload: { csrf_token: flow.csrf_token, provider },
    headers: browser ? { cookie: `service_provider_browser=${browser}` } : {},
  });
  expect(res.statusCode, res.body).toBe(200);
  const cookie = res.cookies.find((c) => c.name === 'service_provider_browser')!;
  expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/v1/' });
  const url = (res.json() as { redirect_to: string }).redirect_to;
  const params = new URL(url).searchParams;
  expect(params.get('code_challenge_method')).toBe('S256');
  return { flowId: flow.id, url, browser: cookie.value, state: params.get('state')! };
}

function callback(
  t: Downstream,
  provider: string,
  params: Record<string, string>,
  browser: string,
): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'GET',
    url: `/v1/providers/${provider}/callback?${new URLSearchParams(params).toString()}`,
    headers: { cookie: `service_provider_browser=${browser}`, accept: HTML },
  });
}

/** An identity named `username`, with a password, already holding the account `subject` at corp. */
async function identityLinkedTo(t: Downstream, username: string, subject: string) {
  const identity = await registerIdentity(t.deps, ACTOR, {
    username,
    password: 'correct horse battery',
  });
  const now = t.clock.now();
  await t.deps.store.insertLink({
    provider: 'corp',
    subject,
    identity_id: identity.id,
    verified_at: now,
    linked_at: now,
  });
  return identity;
}

function sessionOf(res: LightMyRequestResponse): string | undefined {
  return res.cookies.find((c) => c.name === 'service_session')?.value;
}

async function flowErrors(t: Downstream, flowId: string): Promise<string[]> {
  const flow = (await t.inject({ method: 'GET', url: `/v1/flows/${flowId}` })).json() as {
    errors: { error: string }[];
  };
  return flow.errors.map((e) => e.error);
}

function suite(kind: DatabaseKind) {
  let issuer: FakeIssuer;
  let github: FakeGitHub;
  let t: Downstream;

  beforeAll(async () => {
    issuer = await startFakeIssuer();
    github = await startFakeGitHub();
    t = await startDownstream(
      kind,
      [
        {
          id: 'corp',
          type: 'oidc',
          issuer: issuer.issuer,
          client_id: issuer.clientId,
          client_secret_env: 'CORP_SECRET',
        },
        {
          id: 'github',
          type: 'github',
          base_url: github.baseUrl,
          client_id: github.clientId,
          client_secret_env: 'GH_SECRET',
        },
      ],
      {
        CORP_SECRET: issuer.secret,
        GH_SECRET: github.secret,
        SERVICE_REGISTRATION: 'open',
        SERVICE_RETURN_TO_ALLOWED: APP,
      },
    );
    issuer.profiles.set('ann-sub', {
      email: 'Ann@Example.com',
      email_verified: true,
      preferred_username: 'ann',
      name: 'Ann Upstream',
    });
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
    await github?.close();
  });
  beforeEach(() => {
    issuer.next = {};
  });

  /** Signs in as `subject` at the fake issuer, with the next token as tampered. */
  async function signIn(subject: string) {
    const started = await start(t, 'corp');
    const code = issuer.authorize(started.url, subject);
    return {
      started,
      res: await callback(t, 'corp', { code, state: started.state }, started.browser),
    };
  }

  it('signs an account in with a verified link; the identity takes the name and the verified address', async () => {
    const { res } = await signIn('ann-sub');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('Signed in');
    const session = (
      await t.inject({
        method: 'GET',
        url: '/v1/whoami',
        headers: { cookie: `service_session=${sessionOf(res)}` },
      })
    ).json();
    expect(session).toMatchObject({
      authenticated_via: 'provider',
      aal: 'aal1',
      identity: {
        username: 'ann',
        display_name: 'Ann Upstream',
        email: 'ann@example.com',
        email_verified: false,
      },
    });
    // The generic issuer's "verified" is not trusted unless the entry says trust_email.
    const link = await t.deps.store.findLink('corp', 'ann-sub');
    expect(link?.verified_at).not.toBeNull();
    await t.deps.audit.flush();
    const rows = await t.deps.store.listAuditRecords(20);
    const login = rows.find((row) => row.action === 'login' && row.outcome === 'ok');
    expect(JSON.parse(login!.details)).toMatchObject({
      provider: 'corp',
      sign_in_method: 'provider',
    });
    expect(rows.find((row) => row.action === 'identity_register')?.target_identity).toBe(
      link!.identity_id,
    );
    const metrics = await t.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(
      /tessera_provider_sign_ins_total\{provider="corp",outcome="ok"\} 1/,
    );
  });

  it('refuses a replayed state, a forged one, and a callback in another browser', async () => {
    const { started, res } = await signIn('ann-sub');
    expect(res.statusCode).toBe(200);
    const code = issuer.authorize(started.url, 'ann-sub');
    const replayed = await callback(t, 'corp', { code, state: started.state }, started.browser);
    expect(replayed.statusCode).toBe(401);
    expect(replayed.body).toContain('was already used, has expired, or was started elsewhere');
    expect(sessionOf(replayed)).toBeUndefined();

    const other = await start(t, 'corp');
    const forged = await callback(
      t,
      'corp',
      { code: issuer.authorize(other.url, 'ann-sub'), state: 'x'.repeat(43) },
      other.browser,
    );
    expect(forged.statusCode).toBe(401);

    // The attacker's own authorization, finished in the victim's browser: refused, and the
    // attacker's request is still its own browser's to finish.
    const victim = await start(t, 'corp');
    const attackerCode = issuer.authorize(other.url, 'ann-sub');
    const foreign = await callback(
      t,
      'corp',
      { code: attackerCode, state: other.state },
      victim.browser,
    );
    expect(foreign.statusCode).toBe(401);
    expect(sessionOf(foreign)).toBeUndefined();
    const own = await callback(
      t,
      'corp',
      { code: attackerCode, state: other.state },
      other.browser,
    );
    expect(own.statusCode).toBe(200);
  });

  it('refuses a code issued for another authorization (PKCE): the verifier does not match', async () => {
    const first = await start(t, 'corp');
    const second = await start(t, 'corp');
    const injected = issuer.authorize(second.url, 'ann-sub');
    const res = await callback(t, 'corp', { code: injected, state: first.state }, first.browser);
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('could not be verified');
    expect(await flowErrors(t, first.flowId)).toEqual(['invalid_credentials']);
  });

  it.each([
    ['a wrong nonce', { claims: { nonce: 'not-the-flows' } }],
    ['a key the provider does not publish', { foreignKey: true }],
    ['another audience', { claims: { aud: 'someone-else' } }],
    ['an expired token', { claims: { exp: Math.floor(Date.now() / 1000) - 600 } }],
  ])('refuses an ID token with %s, and records it on the flow', async (_what, tampering) => {
    issuer.next = tampering;
    const { started, res } = await signIn('ann-sub');
    expect(res.statusCode, res.body).toBe(401);
    expect(res.body).toContain('could not be verified');
    expect(sessionOf(res)).toBeUndefined();
    expect(await flowErrors(t, started.flowId)).toEqual(['invalid_credentials']);
    // The login page again, so another way in stays open.
    expect(res.body).toContain('Sign in with corp');
  });

  it('shows and records the provider’s own error', async () => {
    const started = await start(t, 'corp');
    const res = await callback(
      t,
      'corp',
      { error: 'access_denied', state: started.state },
      started.browser,
    );
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('corp did not sign you in (access_denied)');
    expect(await flowErrors(t, started.flowId)).toEqual(['provider_error']);
  });

  it('never signs in to an identity by its address: an unverified one that matches is refused', async () => {
    await registerIdentity(t.deps, ACTOR, {
      username: 'owner',
      password: 'correct horse battery',
      email: 'owner@example.com',
    });
    issuer.profiles.set('squatter', {
      email: 'owner@example.com',
      email_verified: false,
      preferred_username: 'owner',
    });
    const { started, res } = await signIn('squatter');
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain(
      'An account with the email address of this corp account already exists',
    );
    expect(sessionOf(res)).toBeUndefined();
    expect(await t.deps.store.findLink('corp', 'squatter')).toBeUndefined();
    expect(await flowErrors(t, started.flowId)).toEqual(['email_taken']);
  });

  it('signs up from a registration flow: its page’s buttons, a new login flow with its return_to', async () => {
    const page = await t.inject({
      method: 'GET',
      url: '/v1/registration',
      headers: { accept: HTML },
    });
    expect(page.statusCode).toBe(200);
    const pageFlow = /action="\/v1\/registration\/([^/"]+)\/provider"/.exec(page.body)?.[1];
    expect(pageFlow).toMatch(/^tess_f_/);
    expect(page.body).toContain('Sign up with GitHub');

    const registration = (
      await t.inject({
        method: 'GET',
        url: `/v1/registration?return_to=${encodeURIComponent(`${APP}/welcome`)}`,
        headers: { accept: 'application/json' },
      })
    ).json() as { id: string; csrf_token: string };
    const url = `/v1/registration/${registration.id}/provider`;
    const wrong = await t.inject({
      method: 'POST',
      url,
      payload: { csrf_token: 'not-the-token', provider: 'corp' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ error: 'invalid_token' });
    const unknown = await t.inject({
      method: 'POST',
      url,
      payload: { csrf_token: registration.csrf_token, provider: 'nobody' },
    });
    expect(unknown.statusCode).toBe(404);
    // A login flow is no registration flow.
    const login = (
      await t.inject({ method: 'GET', url: '/v1/login', headers: { accept: 'application/json' } })
    ).json() as { id: string; csrf_token: string };
    const crossed = await t.inject({
      method: 'POST',
      url: `/v1/registration/${login.id}/provider`,
      payload: { csrf_token: login.csrf_token, provider: 'corp' },
    });
    expect(crossed.statusCode).toBe(404);

    issuer.profiles.set('una-sub', { preferred_username: 'una', email_verified: false });
    const res = await t.inject({
      method: 'POST',
      url,
      payload: { csrf_token: registration.csrf_token, provider: 'corp' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const browser = res.cookies.find((c) => c.name === 'service_provider_browser')!.value;
    const redirectTo = (res.json() as { redirect_to: string }).redirect_to;
    const state = new URL(redirectTo).searchParams.get('state')!;
    const done = await callback(
      t,
      'corp',
      { code: issuer.authorize(redirectTo, 'una-sub'), state },
      browser,
    );
    expect(done.statusCode, done.body).toBe(303);
    expect(done.headers.location).toBe(`${APP}/welcome`);
    const una = (await t.deps.store.findIdentityByUsername('una'))!;
    expect(await t.deps.store.listLinks(una.id)).toMatchObject([{ provider: 'corp' }]);
    expect(sessionOf(done)).toBeDefined();
  });

  it('refuses, page and audit row, a connection of an account another identity holds', async () => {
    await identityLinkedTo(t, 'holder', 'held-sub');
    const cora = await registerIdentity(t.deps, ACTOR, {
      username: 'cora',
      password: 'correct horse battery',
    });
    const flow = await startFlow(t);
    const signedIn = await submit(t, flow.id, {
      username: 'cora',
      password: 'correct horse battery',
      csrf_token: flow.csrf_token,
    });
    const cookie = `service_session=${sessionTokenOf(signedIn)}`;
    const list = await t.inject({
      method: 'GET',
      url: '/v1/account/connections',
      headers: { cookie, accept: 'application/json' },
    });
    expect(list.statusCode, list.body).toBe(200);
    const csrf = list.headers['x-csrf-token'] as string;
    const started = await t.inject({
      method: 'POST',
      url: '/v1/account/connections/corp/connect',
      headers: { cookie, 'x-csrf-token': csrf },
      payload: {},
    });
    expect(started.statusCode, started.body).toBe(200);
    const browser = started.cookies.find((c) => c.name === 'service_provider_browser')!.value;
    const url = (started.json() as { redirect_to: string }).redirect_to;
    const state = new URL(url).searchParams.get('state')!;
    const res = await t.inject({
      method: 'GET',
      url: `/v1/providers/corp/callback?${new URLSearchParams({ code: issuer.authorize(url, 'held-sub'), state })}`,
      headers: { cookie: `${cookie}; service_provider_browser=${browser}`, accept: HTML },
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.body).toContain('connected to another account');
    expect(await t.deps.store.listLinks(cora.id)).toEqual([]);
    const refused = (await auditEntries(t)).filter(
      (entry) => entry.action === 'provider_connect' && entry.target_identity === cora.id,
    );
    expect(refused).toMatchObject([{ outcome: 'validation_error', details: { provider: 'corp' } }]);
  });

  it('makes a taken user name unique', async () => {
    issuer.profiles.set('other-ann', { preferred_username: 'Ann' });
    const { res } = await signIn('other-ann');
    expect(res.statusCode, res.body).toBe(200);
    const link = await t.deps.store.findLink('corp', 'other-ann');
    expect((await t.deps.store.findIdentityById(link!.identity_id))?.username).toBe('ann-2');
  });

  it('signs in with the github preset at base_url: GitHub’s id, login and verified primary address', async () => {
    github.users.set(4242, {
      id: 4242,
      login: 'Octo-Cat',
      name: 'Mona',
      emails: [
        { email: 'old@example.com', primary: false, verified: false, visibility: null },
        { email: 'Mona@Example.org', primary: true, verified: true, visibility: 'public' },
      ],
    });
    for (const round of [1, 2]) {
      const started = await start(t, 'github');
      expect(started.url.startsWith(`${github.baseUrl}/login/oauth/authorize?`)).toBe(true);
      const code = github.authorize(started.url, 4242);
      const res = await callback(t, 'github', { code, state: started.state }, started.browser);
      expect(res.statusCode, res.body).toBe(200);
      const session = (
        await t.inject({
          method: 'GET',
          url: '/v1/whoami',
          headers: { cookie: `service_session=${sessionOf(res)}` },
        })
      ).json();
      expect(session, `round ${round}`).toMatchObject({
        authenticated_via: 'provider',
        identity: {
          username: 'octo-cat',
          display_name: 'Mona',
          email: 'mona@example.org',
          email_verified: true,
        },
      });
    }
    const link = await t.deps.store.findLink('github', '4242');
    expect((await t.deps.store.listLinks(link!.identity_id)).length).toBe(1);
  });
}

describeEachDatabase('provider callbacks', suite);

describe('provider callbacks with registration closed', () => {
  let issuer: FakeIssuer;
  let t: Downstream;
  beforeAll(async () => {
    issuer = await startFakeIssuer();
    t = await startDownstream(
      'sqlite',
      [
        {
          id: 'corp',
          type: 'oidc',
          issuer: issuer.issuer,
          client_id: issuer.clientId,
          client_secret_env: 'CORP_SECRET',
        },
      ],
      { CORP_SECRET: issuer.secret },
    );
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it('refuses an account no identity is linked to, with a clear page, and signs in a linked one', async () => {
    const started = await start(t, 'corp');
    const res = await callback(
      t,
      'corp',
      { code: issuer.authorize(started.url, 'stranger'), state: started.state },
      started.browser,
    );
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('new accounts cannot be created here');
    expect(await flowErrors(t, started.flowId)).toEqual(['registration_closed']);

    await identityLinkedTo(t, 'known', 'known-sub');
    const again = await start(t, 'corp');
    const ok = await callback(
      t,
      'corp',
      { code: issuer.authorize(again.url, 'known-sub'), state: again.state },
      again.browser,
    );
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.body).toContain('known');
  });

  it('has no sign-up route: 404 before the body is read', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/v1/registration/tess_f_whatever/provider',
      payload: { provider: 'corp' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
  });
});

describeOnPostgres('provider callbacks racing on two instances', () => {
  let issuer: FakeIssuer;
  let db: TestDatabase;
  let one: Downstream;
  let two: Downstream;
  beforeAll(async () => {
    issuer = await startFakeIssuer();
    db = await createTestDatabase('postgres');
    const providers = [
      {
        id: 'corp',
        type: 'oidc',
        issuer: issuer.issuer,
        client_id: issuer.clientId,
        client_secret_env: 'CORP_SECRET',
      },
    ];
    const env = { CORP_SECRET: issuer.secret, SERVICE_REGISTRATION: 'open' };
    one = await startDownstream('postgres', providers, env, { db });
    two = await startDownstream('postgres', providers, env, { db });
    issuer.profiles.set('racer', { preferred_username: 'racer' });
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await db?.drop();
    await issuer?.close();
  });

  it('of copies of one callback sent to both instances at once, exactly one signs in', async () => {
    for (let round = 0; round < 3; round += 1) {
      const started = await start(one, 'corp');
      const code = issuer.authorize(started.url, 'racer');
      const params = { code, state: started.state };
      const answers = await Promise.all([
        callback(one, 'corp', params, started.browser),
        callback(two, 'corp', params, started.browser),
        callback(one, 'corp', params, started.browser),
        callback(two, 'corp', params, started.browser),
      ]);
      expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 401, 401, 401]);
      expect(answers.filter((res) => sessionOf(res) !== undefined)).toHaveLength(1);
    }
    const link = await one.deps.store.findLink('corp', 'racer');
    expect((await one.deps.store.listLinks(link!.identity_id)).length).toBe(1);
  });
});

describe("provider sign-in from an operator's login UI", () => {
  const UI = 'https://login.example.com/ui';
  let issuer: FakeIssuer;
  let t: Downstream;
  beforeAll(async () => {
    issuer = await startFakeIssuer();
    t = await startDownstream(
      'sqlite',
      [
        {
          id: 'corp',
          type: 'oidc',
          issuer: issuer.issuer,
          client_id: issuer.clientId,
          client_secret_env: 'CORP_SECRET',
        },
      ],
      { CORP_SECRET: issuer.secret, SERVICE_LOGIN_UI_URL: UI, SERVICE_REGISTRATION: 'open' },
    );
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it('answers the URL to the UI (CORS), and sends the browser back to the UI when the flow did not complete', async () => {
    const flow = (
      await t.inject({ method: 'GET', url: '/v1/login', headers: { accept: 'application/json' } })
    ).json() as {
      id: string;
      csrf_token: string;
    };
    const res = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/provider`,
      headers: { origin: 'https://login.example.com' },
      payload: { csrf_token: flow.csrf_token, provider: 'corp' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://login.example.com');
    const url = (res.json() as { redirect_to: string }).redirect_to;
    expect(url.startsWith(`${issuer.issuer}/authorize?`)).toBe(true);
    const browser = res.cookies.find((c) => c.name === 'service_provider_browser')!.value;
    const state = new URL(url).searchParams.get('state')!;
    const back = await callback(t, 'corp', { error: 'access_denied', state }, browser);
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe(`${UI}?flow=${flow.id}`);
    expect(await flowErrors(t, flow.id)).toEqual(['provider_error']);

    // A page elsewhere cannot start it.
    const foreign = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/provider`,
      headers: { origin: 'https://evil.example' },
      payload: { csrf_token: flow.csrf_token, provider: 'corp' },
    });
    expect(foreign.statusCode).toBe(403);
  });
});

describeOnPostgres('disconnections racing on two instances', () => {
  let db: TestDatabase;
  let one: Downstream;
  let two: Downstream;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const providers = [
      {
        id: 'corp',
        type: 'oidc',
        issuer: 'https://sso.example.com',
        client_id: 'c',
        client_secret_env: 'S',
      },
    ];
    one = await startDownstream('postgres', providers, { S: 's' }, { db });
    two = await startDownstream('postgres', providers, { S: 's' }, { db });
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
    await db?.drop();
  });

  it('of two disconnections of an identity’s last two ways in, exactly one passes', async () => {
    const { connectionDeps } = await import('../../src/http/routes/account-connections.js');
    const { disconnect } = await import('../../src/domain/providers/connections.js');
    for (let round = 0; round < 4; round += 1) {
      const now = one.clock.now();
      // Signed up through the provider: no password, no passkey.
      const identity = {
        id: randomUUID(),
        username: `racer-${round}`,
        display_name: 'Racer',
        avatar_url: null,
        email: null,
        email_verified_at: null,
        state: 'active' as const,
        password_hash: null,
        created_at: now,
        updated_at: now,
      };
      await one.deps.store.insertIdentity(identity);
      for (const subject of ['a', 'b']) {
        await one.deps.store.insertLink({
          provider: 'corp',
          subject: `${round}-${subject}`,
          identity_id: identity.id,
          verified_at: now,
          linked_at: now,
        });
      }
      const results = await Promise.allSettled([
        disconnect(connectionDeps(one.deps), ACTOR, identity.id, {
          providerId: 'corp',
          subject: `${round}-a`,
        }),
        disconnect(connectionDeps(two.deps), ACTOR, identity.id, {
          providerId: 'corp',
          subject: `${round}-b`,
        }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(await one.deps.store.listLinks(identity.id)).toHaveLength(1);
    }
  });
});
