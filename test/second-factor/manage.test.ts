import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { auditEntries } from '../helpers/core.js';
import {
  type FlowTestApp,
  LOOSE_SIGN_IN_LIMITS,
  PASSWORD,
  addIdentity,
  createFlowApp,
  expectError,
} from '../flows/helpers.js';
import {
  STEP_MS,
  accountPost,
  accountStatus,
  cookieOf,
  enrolledIdentity,
  passwordStep,
  secondStep,
  signInWithCode,
  signedIn,
  totpCode,
} from './helpers.js';

let counter = 0;
const newName = () => `tf-manage-${++counter}`;

/**
 * Issue 13 items 3, 5 and 6 (TOTP half): the account endpoints, the direct sign-in, the
 * operators' endpoints, and the sealed secret.
 */
describeEachDatabase('managing a second factor', (kind) => {
  let t: FlowTestApp;
  let direct: string;
  let reader: string;

  beforeAll(async () => {
    t = await createFlowApp(kind, {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_PRIVILEGED_WINDOW_MINUTES: '15',
    });
    direct = await t.token('direct_auth');
    reader = await t.token('identity_read');
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  const enrolled = () => enrolledIdentity(t, newName());

  const authenticate = (body: Record<string, unknown>) =>
    t.call('POST', '/v1/authenticate/password', direct, body);

  it('enrols: a key, an otpauth URI and a server-drawn QR code; pending until confirmed', async () => {
    const username = newName();
    const identity = await addIdentity(t, username);
    const session = await signedIn(t, username);
    expect(await accountStatus(t, session)).toMatchObject({
      enabled: false,
      pending: false,
      recovery_codes_left: 0,
    });
    const res = await accountPost(t, session, '/totp');
    expect(res.statusCode).toBe(200);
    const body = res.json() as { secret: string; otpauth_uri: string; qr_svg: string };
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(body.otpauth_uri).toBe(
      `otpauth://totp/Tessera:${username}?secret=${body.secret}&issuer=Tessera`,
    );
    expect(body.qr_svg).toMatch(/^<svg[^>]*viewBox/);
    // Sealed at rest, bound to the identity.
    const row = await t.deps.store.findTotpFactor(identity.id);
    expect(row?.secret_sealed).toMatch(/^sb1\./);
    expect(row?.secret_sealed).not.toContain(body.secret);
    expect(row?.confirmed_at).toBeNull();
    expect(await accountStatus(t, session)).toMatchObject({ enabled: false, pending: true });
    // A pending enrolment asks nothing at sign-in.
    expect((await passwordStep(t, username)).res.statusCode).toBe(200);

    const wrong = await accountPost(t, session, '/totp/confirm', { code: '000000' });
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().error).toBe('validation_error');
    const ok = await accountPost(t, session, '/totp/confirm', {
      code: await totpCode(body.secret, t.clock.now()),
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().recovery_codes).toHaveLength(10);
    expect(await accountStatus(t, session)).toMatchObject({
      enabled: true,
      pending: false,
      methods: ['totp'],
      recovery_codes_left: 10,
    });
    // Stored hashed only.
    const codes = await t.deps.store.listUnusedRecoveryCodes(identity.id);
    expect(codes).toHaveLength(10);
    const plain = (ok.json().recovery_codes as string[]).map((code) => code.replaceAll('-', ''));
    for (const code of codes) expect(plain.some((p) => code.code_hash.includes(p))).toBe(false);
    // Turning it on again needs turning it off first (and, now that it is on, a session
    // that used it: the enrolling one is aal1).
    expect((await accountPost(t, session, '/totp')).statusCode).toBe(403);
    const strong = await signInWithCode(t, username, body.secret);
    expect((await accountPost(t, strong, '/totp')).statusCode).toBe(422);
  });

  it('changes need the CSRF token, an allowed Origin and a recent sign-in', async () => {
    const username = newName();
    const identity = await addIdentity(t, username);
    const session = await signedIn(t, username);
    const noCsrf = await t.inject({
      method: 'POST',
      url: '/v1/account/two-factor/totp',
      headers: cookieOf(session),
      payload: {},
    });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json()).toMatchObject({ error: 'forbidden', message: expect.any(String) });
    const foreign = await accountPost(t, session, '/totp', {}, { origin: 'https://evil.example' });
    expectError(foreign, 403, 'forbidden');
    const noSession = await t.inject({
      method: 'POST',
      url: '/v1/account/two-factor/totp',
      payload: {},
    });
    expectError(noSession, 401, 'invalid_token');

    t.clock.advance(16 * 60_000);
    const stale = await accountPost(t, session, '/totp');
    expect(stale.statusCode).toBe(403);
    expect(stale.json()).toMatchObject({
      error: 'forbidden',
      message: expect.stringMatching(/recent sign-in/),
    });
    expect(await t.deps.store.findTotpFactor(identity.id)).toBeUndefined();

    // The hosted page's form post gets the page, with a way to sign in again.
    const { csrf_token: csrf } = await accountStatus(t, session);
    const stalePage = await t.inject({
      method: 'POST',
      url: '/v1/account/two-factor/totp',
      headers: { ...cookieOf(session), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `csrf_token=${encodeURIComponent(csrf)}`,
    });
    expect(stalePage.statusCode).toBe(403);
    expect(stalePage.body).toMatch(/recent sign-in/);
    expect(stalePage.body).toContain('>Sign in again</a>');
  });

  it('regenerates recovery codes (old ones stop working) and turns off, audited', async () => {
    const { username, identity, secret, recoveryCodes } = await enrolled();
    const session = await signInWithCode(t, username, secret);
    const res = await accountPost(t, session, '/recovery-codes');
    expect(res.statusCode).toBe(200);
    const fresh = res.json().recovery_codes as string[];
    expect(fresh).toHaveLength(10);
    const { flow } = await passwordStep(t, username);
    expectError(
      await secondStep(t, flow, 'recovery_code', recoveryCodes[0]!),
      401,
      'invalid_credentials',
    );
    expect((await secondStep(t, flow, 'recovery_code', fresh[0]!)).statusCode).toBe(200);

    const off = await accountPost(t, session, '/disable');
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ enabled: false, recovery_codes_left: 0 });
    expect((await passwordStep(t, username)).res.statusCode).toBe(200);
    const actions = (await auditEntries(t))
      .filter((row) => row.target_identity === identity.id && row.service_name === 'browser')
      .filter((row) => row.action !== 'login')
      .map((row) => [row.action, row.service_name]);
    expect(actions).toEqual([
      ['second_factor_enrol', 'browser'],
      ['second_factor_enable', 'browser'],
      ['recovery_codes_regenerate', 'browser'],
      ['second_factor_disable', 'browser'],
    ]);
  });

  it('direct sign-in: 403 with a message without a code, 401 on a wrong one, aal2 with it', async () => {
    const { username, secret, recoveryCodes } = await enrolled();
    const missing = await authenticate({ username, password: PASSWORD });
    expect(missing.statusCode).toBe(403);
    expect(missing.json()).toEqual({
      error: 'forbidden',
      message: expect.stringMatching(/totp_code/),
    });
    expectError(
      await authenticate({ username, password: PASSWORD, totp_code: '000000' }),
      401,
      'invalid_credentials',
    );
    // The password is checked first: a wrong one says nothing about the second factor.
    expectError(
      await authenticate({ username, password: 'wrong password!', totp_code: '000000' }),
      401,
      'invalid_credentials',
    );
    const code = await totpCode(secret, t.clock.now());
    const ok = await authenticate({ username, password: PASSWORD, totp_code: code });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().session).toMatchObject({ authenticated_via: 'password', aal: 'aal2' });
    expectError(
      await authenticate({ username, password: PASSWORD, totp_code: code }),
      401,
      'invalid_credentials',
    );
    const byRecovery = await authenticate({
      username,
      password: PASSWORD,
      recovery_code: recoveryCodes[9]!,
    });
    expect(byRecovery.json().session).toMatchObject({ aal: 'aal2' });
    const both = await authenticate({
      username,
      password: PASSWORD,
      totp_code: code,
      recovery_code: recoveryCodes[8]!,
    });
    expect(both.statusCode).toBe(422);
  });

  it('direct sign-in of an identity without a second factor: unchanged, a code is refused', async () => {
    const username = newName();
    await addIdentity(t, username);
    const plain = await authenticate({ username, password: PASSWORD });
    expect(plain.statusCode).toBe(200);
    expect(plain.json().session).toMatchObject({ aal: 'aal1' });
    expect(
      (await authenticate({ username, password: PASSWORD, totp_code: '123456' })).statusCode,
    ).toBe(422);
  });

  it('operators read the factor with identity_read and reset it with direct_auth', async () => {
    const { username, identity } = await enrolled();
    const read = await t.call('GET', `/v1/identities/${identity.id}/second-factor`, reader);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      enabled: true,
      pending: false,
      methods: ['totp'],
      since: expect.stringMatching(/Z$/),
      recovery_codes_left: 10,
    });
    expectError(
      await t.call('GET', `/v1/identities/${identity.id}/second-factor`, direct),
      403,
      'forbidden',
      /lacks the identity_read grant$/,
    );
    expectError(
      await t.call('DELETE', `/v1/identities/${identity.id}/second-factor`, reader),
      403,
      'forbidden',
      /lacks the direct_auth grant$/,
    );
    const unknown = '0193a000-0000-7000-8000-000000000000';
    expectError(
      await t.call('GET', `/v1/identities/${unknown}/second-factor`, reader),
      404,
      'not_found',
    );
    expectError(
      await t.call('DELETE', `/v1/identities/${unknown}/second-factor`, direct),
      404,
      'not_found',
    );

    const reset = await t.call('DELETE', `/v1/identities/${identity.id}/second-factor`, direct);
    expect(reset.statusCode).toBe(204);
    expect(
      (await t.call('GET', `/v1/identities/${identity.id}/second-factor`, reader)).json(),
    ).toMatchObject({
      enabled: false,
      recovery_codes_left: 0,
    });
    // Signs in with the password alone again.
    expect((await passwordStep(t, username)).res.statusCode).toBe(200);
    expect(
      (await t.call('DELETE', `/v1/identities/${identity.id}/second-factor`, direct)).statusCode,
    ).toBe(204);
    const rows = (await auditEntries(t)).filter(
      (row) =>
        row.action === 'identity_second_factor_reset' &&
        row.target_identity === identity.id &&
        row.outcome === 'ok',
    );
    expect(rows.map((row) => row.details.was_enabled)).toEqual([true, false]);
  });

  it('a tampered or transplanted sealed secret verifies no code', async () => {
    const a = await enrolled();
    const b = await enrolled();
    const rowA = (await t.deps.store.findTotpFactor(a.identity.id))!;
    const rowB = (await t.deps.store.findTotpFactor(b.identity.id))!;
    // b's row gets a's sealed secret: sealed for a's identity, it must not open for b.
    await t.deps.store.resealTotpSecret(b.identity.id, rowB.secret_sealed, rowA.secret_sealed);
    const { flow } = await passwordStep(t, b.username);
    expectError(
      await secondStep(t, flow, 'totp', await totpCode(a.secret, t.clock.now())),
      401,
      'invalid_credentials',
    );

    // One byte of a's ciphertext flipped.
    const parts = rowA.secret_sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body.writeUInt8(body.readUInt8(0) ^ 1, 0);
    const tampered = [...parts.slice(0, 3), body.toString('base64url')].join('.');
    await t.deps.store.resealTotpSecret(a.identity.id, rowA.secret_sealed, tampered);
    const aFlow = await passwordStep(t, a.username);
    expectError(
      await secondStep(t, aFlow.flow, 'totp', await totpCode(a.secret, t.clock.now())),
      401,
      'invalid_credentials',
    );
  });

  it('a secret sealed under a previous key still verifies and is re-sealed under the new one', async () => {
    const { username, identity, secret } = await enrolled();
    const before = (await t.deps.store.findTotpFactor(identity.id))!.secret_sealed;
    const rotated = await createTestApp(
      kind,
      {
        SERVICE_ENCRYPTION_KEY: 'the-next-encryption-key',
        SERVICE_ENCRYPTION_KEYS_PREVIOUS: 'test-encryption-key',
        SERVICE_RATE_LIMIT_LOGIN_IP: '1000/60s',
      },
      t.db,
    );
    try {
      rotated.clock.advance(t.clock.now() - rotated.clock.now() + STEP_MS);
      const start = await rotated.inject({ method: 'GET', url: '/v1/login' });
      const flow = start.json();
      const first = await rotated.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/password`,
        payload: { username, password: PASSWORD, csrf_token: flow.csrf_token },
      });
      expect(first.statusCode).toBe(403);
      const res = await secondStep(
        rotated,
        flow,
        'totp',
        await totpCode(secret, rotated.clock.now()),
      );
      expect(res.statusCode, res.body).toBe(200);
      const after = (await rotated.deps.store.findTotpFactor(identity.id))!.secret_sealed;
      expect(after).not.toBe(before);
      expect(rotated.deps.secretBox.isStale(after)).toBe(false);
      expect(rotated.deps.secretBox.isStale(before)).toBe(true);
    } finally {
      await rotated.close();
    }
  });
});
