import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  TesseraError,
  createTesseraClient,
  type ErrorCode,
  type TesseraClient,
} from '@tessera/client';
import { startTessera, type TesseraProcess } from './tessera-process.js';
import { checksummedToken, legacyToken } from './token-fixtures.js';

const PASSWORD = 'correct horse battery staple';

/** The TesseraError a promise rejects with. */
async function failure(pending: Promise<unknown>): Promise<TesseraError> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TesseraError);
  return error as TesseraError;
}

describe('the client against a real Tessera process', () => {
  let tessera: TesseraProcess;
  let client: TesseraClient;

  beforeAll(async () => {
    tessera = await startTessera({
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '2/2s',
      SERVICE_RETURN_TO_ALLOWED: 'http://app.example',
    });
    client = createTesseraClient({
      baseUrl: tessera.url,
      serviceToken: tessera.serviceToken,
      acceptLegacyTokens: tessera.legacyTokens,
    });
  });
  afterAll(() => tessera?.stop());

  it('email addresses: register with one, look it up, set, verify and remove it', async () => {
    const erin = await client.register({
      username: 'erin-mail',
      password: PASSWORD,
      email: 'Erin@Example.COM',
      email_verified: true,
    });
    expect(erin).toMatchObject({ email: 'erin@example.com', email_verified: true });
    expect(await client.lookupIdentityByEmail('ERIN@example.com')).toEqual(erin);
    const gwen = await client.register({ username: 'gwen', password: PASSWORD });
    const taken = await failure(client.setEmail(gwen.id, { email: 'erin@EXAMPLE.com' }));
    expect(taken).toMatchObject({ code: 'email_taken', status: 409 });
    expectTypeOf(taken.code).toEqualTypeOf<ErrorCode>();
    const set = await client.setEmail(gwen.id, { email: 'gwen@example.com', verified: true });
    expect(set).toMatchObject({ email: 'gwen@example.com', email_verified: true });
    const removed = await client.setEmail(gwen.id, { email: null });
    expect(removed).toMatchObject({ email: null, email_verified: false });
    expect(await failure(client.lookupIdentityByEmail('gwen@example.com'))).toMatchObject({
      code: 'not_found',
    });
  });

  it('calls every service endpoint', async () => {
    const alice = await client.register({
      username: 'alice',
      password: PASSWORD,
      display_name: 'Alice',
    });
    expect(alice).toMatchObject({ username: 'alice', display_name: 'Alice', state: 'active' });
    expect(await client.getIdentity(alice.id)).toEqual(alice);
    expect(await client.lookupIdentityByUsername('ALICE')).toEqual(alice);
    const renamed = await client.updateProfile(alice.id, { display_name: 'Alice Liddell' });
    expect(renamed.display_name).toBe('Alice Liddell');

    const signedIn = await client.authenticatePassword({ username: 'alice', password: PASSWORD });
    expect(signedIn.session.identity.id).toBe(alice.id);
    const verified = await client.verifySession(signedIn.token);
    expect(verified.id).toBe(signedIn.session.id);
    expect((await client.whoami(signedIn.token)).id).toBe(signedIn.session.id);

    const bob = await client.registerAndAuthenticate({ username: 'bob', password: PASSWORD });
    expect(bob.session.identity.username).toBe('bob');

    const link = await client.createLink(alice.id, {
      provider: 'github',
      subject: '42',
      verified: true,
    });
    expect(link).toMatchObject({ provider: 'github', subject: '42', identity_id: alice.id });
    expect(await client.listLinks(alice.id)).toEqual([link]);
    const viaLink = await client.authenticateLink({ provider: 'github', subject: '42' });
    expect(viaLink).toMatchObject({ created: false, session: { identity: { id: alice.id } } });
    await client.deleteLink(alice.id, { provider: 'github', subject: '42' });
    expect(await client.listLinks(alice.id)).toEqual([]);

    await client.revokeSession({ token: viaLink.token });
    expect((await failure(client.verifySession(viaLink.token))).code).toBe('invalid_token');
    await client.revokeSession({ session_id: bob.session.id });
    expect((await failure(client.verifySession(bob.token))).code).toBe('invalid_token');
    expect(await client.revokeIdentitySessions(alice.id)).toEqual({ revoked: 1 });
    expect((await failure(client.whoami(signedIn.token))).code).toBe('invalid_token');
  });

  it('reads and resets credentials: sessions, password, passkeys, second factor', async () => {
    const carol = await client.register({ username: 'credentials-carol', password: PASSWORD });
    const first = await client.authenticatePassword({
      username: 'credentials-carol',
      password: PASSWORD,
    });
    const listed = await client.listIdentitySessions(carol.id);
    expect(listed.map(({ id }) => id)).toEqual([first.session.id]);

    await client.setIdentityPassword(carol.id, { password: 'violet kettle drums sideways 42' });
    expect((await failure(client.verifySession(first.token))).code).toBe('invalid_token');
    expect(await client.listIdentitySessions(carol.id)).toEqual([]);
    const again = await client.authenticatePassword({
      username: 'credentials-carol',
      password: 'violet kettle drums sideways 42',
    });
    expect(again.session.aal).toBe('aal1');

    expect(await client.listIdentityPasskeys(carol.id)).toEqual([]);
    expect(await client.resetIdentityPasskeys(carol.id)).toEqual({ removed: 0 });
    expect(await client.getIdentitySecondFactor(carol.id)).toMatchObject({ enabled: false });
    await client.resetIdentitySecondFactor(carol.id);
    const missing = await failure(client.deleteIdentityPasskey(carol.id, carol.id));
    expect(missing.code).toBe('not_found');
  });

  it('walks a login flow and logs out', async () => {
    await client.register({ username: 'carol', password: PASSWORD });
    const flow = await client.startLogin({ returnTo: 'http://app.example/home' });
    expect(flow).toMatchObject({ state: 'created', return_to: 'http://app.example/home' });
    expect((await client.getFlow(flow.id)).state).toBe('created');
    const done = await client.submitFlowPassword(flow.id, {
      username: 'carol',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(done.session.identity.username).toBe('carol');
    expect((await client.getFlow(flow.id)).state).toBe('completed');
    expect(client.loginPageUrl('http://app.example/x')).toBe(
      `${tessera.url}/v1/login?return_to=http%3A%2F%2Fapp.example%2Fx`,
    );
  });

  it('logs a session out by its token', async () => {
    const { token } = await client.registerAndAuthenticate({
      username: 'dave',
      password: PASSWORD,
    });
    await client.logout(token);
    expect((await failure(client.whoami(token))).code).toBe('invalid_token');
  });

  it('answers the operational endpoints', async () => {
    await client.healthz();
    expect(await client.readyz()).toMatchObject({ status: 'ok' });
    expect(await client.metrics()).toContain('# HELP');
    expect(await client.getOpenApiDocument()).toMatchObject({ openapi: expect.any(String) });
  });

  it('reports failures as TesseraError with a documented code', async () => {
    expectTypeOf<TesseraError['code']>().toEqualTypeOf<ErrorCode>();
    const notFound = await failure(client.getIdentity('00000000-0000-7000-8000-000000000000'));
    expect(notFound).toMatchObject({ code: 'not_found', status: 404 });
    await client.register({ username: 'erin', password: PASSWORD });
    expect(await failure(client.register({ username: 'erin', password: PASSWORD }))).toMatchObject({
      code: 'username_taken',
      status: 409,
    });
    const invalid = await failure(client.register({ username: 'x', password: PASSWORD }));
    expect(invalid).toMatchObject({ code: 'validation_error', status: 422 });
    expect(invalid.detail).toMatch(/username/);
    expect(
      await failure(client.authenticatePassword({ username: 'erin', password: 'wrong password!' })),
    ).toMatchObject({
      code: 'invalid_credentials',
      status: 401,
      retryable: false,
    });
  });

  it('waits out retry_after on rate_limited, then succeeds; reports a longer one at once', async () => {
    const delays: number[] = [];
    const patient = createTesseraClient({
      baseUrl: tessera.url,
      sleep: (ms) => {
        delays.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    // Flow creation is limited to 2 per 2 s per address here: quick calls soon meet the
    // limit; the refused one is waited out (retry_after 1 or 2) and retried, and succeeds.
    for (let i = 0; i < 10 && delays.length === 0; i += 1) {
      expect((await patient.startLogin()).state).toBe('created');
    }
    expect(delays.length).toBeGreaterThan(0);
    for (const delay of delays) expect([1000, 2000]).toContain(delay);

    const waited = delays.length;
    const impatient = createTesseraClient({
      baseUrl: tessera.url,
      retry: { maxRetryAfterSeconds: 0 },
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
    });
    let limited: unknown;
    for (let i = 0; i < 10 && !limited; i += 1) {
      limited = await impatient.startLogin().then(
        () => undefined,
        (error: unknown) => error,
      );
    }
    expect(limited).toBeInstanceOf(TesseraError);
    expect(limited).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryable: true,
    });
    expect([1, 2]).toContain((limited as TesseraError).retryAfter);
    expect(delays).toHaveLength(waited);
  });

  it('refuses malformed and checksum-failing tokens offline, before any request', async () => {
    // A client pointed at a closed port: any request it made would fail as `unavailable`.
    const offline = createTesseraClient({ baseUrl: 'http://127.0.0.1:9', retry: { retries: 0 } });
    for (const token of ['tess_s_short', legacyToken('session'), checksummedToken('service')]) {
      expect(await failure(offline.verifySession(token))).toMatchObject({
        code: 'invalid_token',
        status: 401,
      });
      expect(await failure(offline.whoami(token))).toMatchObject({
        code: 'invalid_token',
        status: 401,
      });
    }
    expect(await failure(offline.getFlow(legacyToken('flow')))).toMatchObject({
      code: 'not_found',
    });
    // A well-formed token with a good checksum is sent on.
    expect(await failure(offline.verifySession(checksummedToken('session')))).toMatchObject({
      code: 'unavailable',
      status: 0,
    });
    // With acceptLegacyTokens, a pre-checksum token is sent on too.
    const lenient = createTesseraClient({
      baseUrl: 'http://127.0.0.1:9',
      retry: { retries: 0 },
      acceptLegacyTokens: true,
    });
    expect((await failure(lenient.verifySession(legacyToken('session')))).code).toBe('unavailable');
    // A service token is checked when the client is made (options.test.ts has the rest).
    expect(() =>
      createTesseraClient({ baseUrl: tessera.url, serviceToken: 'tess_svc_nope' }),
    ).toThrow(TesseraError);
    expect(() =>
      createTesseraClient({ baseUrl: tessera.url, serviceToken: legacyToken('service') }),
    ).toThrow(/acceptLegacyTokens/);
  });

  it('sends a session token from this server on only when it passes the offline check', async () => {
    const { token } = await client.registerAndAuthenticate({
      username: 'grace',
      password: PASSWORD,
    });
    const strict = createTesseraClient({
      baseUrl: tessera.url,
      serviceToken: checksummedToken('service'),
    });
    if (tessera.legacyTokens) {
      // This server still mints pre-checksum tokens: a strict client refuses them offline.
      expect((await failure(strict.whoami(token))).code).toBe('invalid_token');
    } else {
      expect((await strict.whoami(token)).identity.username).toBe('grace');
    }
  });
});
