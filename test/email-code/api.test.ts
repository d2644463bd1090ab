import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { SECOND_FACTOR_REQUIRED } from '../../src/domain/sign-in/second-factor.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import { auditEntries } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  BROWSER_ACCEPT,
  LOOSE_SIGN_IN_LIMITS,
  expectError,
  expectValidationError,
  flowRow,
  hitsOn,
  operator,
  startFlow,
} from '../flows/helpers.js';
import { STEP_MS, enrolTotp, secondStep, signedIn, totpCode } from '../second-factor/helpers.js';
import { useVerificationApp, wrongCode } from '../verification/helpers.js';
import { EMAIL_CODE_ON, askForCode, codeMailed, submitCode, userWithAddress } from './helpers.js';

/** Issue 23 item 6: the sign-in method `email_code`, through the JSON API an operator's UI uses. */
describeEachDatabase('sign-in by email code (SERVICE_SIGN_IN_EMAIL_CODE=on)', (kind) => {
  const h = useVerificationApp(kind, { ...EMAIL_CODE_ON, SERVICE_FLOW_MAX_ATTEMPTS: '3' });

  it('mails a code to a verified address; the code signs in at aal1, once', async () => {
    const { user, address } = await userWithAddress(h);
    const { flow, answer, code } = await codeMailed(h, address.toUpperCase());
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json()).toEqual({ options: { address, code_length: 6 } });
    expect(h.smtp.received.at(-1)!.to).toMatchObject({ text: address });
    expect(h.smtp.received.at(-1)!.subject).toBe(`Your sign-in code: ${code}`);

    const res = await submitCode(h.t, flow, address, code!);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().session).toMatchObject({
      authenticated_via: 'email_code',
      aal: 'aal1',
      identity: { id: user.id },
    });
    expect(res.cookies.find((cookie) => cookie.name === 'service_session')).toBeDefined();

    // Used up: the same code on a new flow is a wrong code there.
    const again = await startFlow(h.t);
    expectError(await submitCode(h.t, again, address, code!), 401, 'invalid_credentials');
    expect((await flowRow(h.t, again.id)).failed_attempts).toBe(1);
  });

  it('the mail is in the browser’s language where a translation exists', async () => {
    const { address } = await userWithAddress(h);
    const flow = await startFlow(h.t);
    const before = h.smtp.received.length;
    const res = await askForCode(h.t, flow, address, { 'accept-language': 'de-CH,de;q=0.9' });
    expect(res.statusCode, res.body).toBe(200);
    const [mail] = await h.mailsSince(before);
    expect(mail!.subject).toMatch(/^Ihr Anmeldecode: \d{6}$/);
  });

  it('answers an unknown, an unverified and a disabled identity’s address alike, and mails none of them', async () => {
    const known = await userWithAddress(h);
    const unverified = await userWithAddress(h, { verified: false });
    const disabled = await userWithAddress(h);
    await setIdentityState(h.t.deps, operator, disabled.user.id, 'disabled');
    const stranger = `nobody-${known.user.username}@mail.example.com`;

    const mailed = await codeMailed(h, known.address);
    expect(mailed.code).toMatch(/^\d{6}$/);
    const bodyOf = (address: string) => ({ options: { address, code_length: 6 } });
    expect(mailed.answer.json()).toEqual(bodyOf(known.address));
    for (const address of [stranger, unverified.address, disabled.address]) {
      const { answer, code } = await codeMailed(h, address);
      expect({ status: answer.statusCode, body: answer.json(), code }).toEqual({
        status: 200,
        body: bodyOf(address),
        code: undefined,
      });
      expect(Object.keys(answer.headers).sort()).toEqual(Object.keys(mailed.answer.headers).sort());
      // A guess is refused as a wrong code would be.
      const flow = await startFlow(h.t);
      expectError(await submitCode(h.t, flow, address, '123456'), 401, 'invalid_credentials');
    }
  });

  it('a wrong code is a failed attempt on the flow; at the cap the flow closes', async () => {
    const { address } = await userWithAddress(h);
    const { flow, code } = await codeMailed(h, address);
    for (let i = 1; i <= 2; i += 1) {
      expectError(
        await submitCode(h.t, flow, address, wrongCode(code!)),
        401,
        'invalid_credentials',
      );
      expect(await flowRow(h.t, flow.id)).toMatchObject({ state: 'created', failed_attempts: i });
    }
    const errors = await h.t.inject({ method: 'GET', url: `/v1/flows/${flow.id}` });
    expect(errors.json().errors.map((row: { error: string }) => row.error)).toEqual([
      'invalid_credentials',
      'invalid_credentials',
    ]);
    expectError(await submitCode(h.t, flow, address, wrongCode(code!)), 401, 'invalid_credentials');
    expect((await flowRow(h.t, flow.id)).state).toBe('failed');
    // Closed: even the right code completes nothing.
    expectError(await submitCode(h.t, flow, address, code!), 401, 'invalid_token');
  });

  it('wrong codes are capped on the code too, across flows: then the right one is refused', async () => {
    const { address } = await userWithAddress(h);
    const { code } = await codeMailed(h, address);
    // Five guesses (the mailed code's cap), spread over flows of three attempts each.
    for (let i = 0; i < 5; i += 1) {
      const flow = await startFlow(h.t);
      expectError(
        await submitCode(h.t, flow, address, wrongCode(code!)),
        401,
        'invalid_credentials',
      );
    }
    const flow = await startFlow(h.t);
    expectError(await submitCode(h.t, flow, address, code!), 401, 'invalid_credentials');
    // A new code works again.
    const fresh = await codeMailed(h, address);
    expect((await submitCode(h.t, fresh.flow, address, fresh.code!)).statusCode).toBe(200);
  });

  it('an expired code is refused; a newer code replaces the older one', async () => {
    const { address } = await userWithAddress(h);
    const first = await codeMailed(h, address);
    h.t.clock.advance(15 * 60_000 + 1);
    const flow = await startFlow(h.t);
    expectError(await submitCode(h.t, flow, address, first.code!), 401, 'invalid_credentials');

    const older = await codeMailed(h, address);
    const newer = await codeMailed(h, address);
    if (older.code !== newer.code) {
      expectError(
        await submitCode(h.t, newer.flow, address, older.code!),
        401,
        'invalid_credentials',
      );
    }
    const done = await submitCode(h.t, newer.flow, address, newer.code!);
    expect(done.statusCode, done.body).toBe(200);
  });

  it('codes sent per identity are limited without a word: the answer stays the same, no mail', async () => {
    const { address } = await userWithAddress(h);
    for (let i = 0; i < 5; i += 1) expect((await codeMailed(h, address)).code).toBeDefined();
    const sixth = await codeMailed(h, address);
    expect(sixth.answer.statusCode).toBe(200);
    expect(sixth.answer.json()).toEqual({ options: { address, code_length: 6 } });
    expect(sixth.code).toBeUndefined();
  });

  it('counts every submission against the address (SERVICE_RATE_LIMIT_LOGIN_USERNAME)', async () => {
    const { address } = await userWithAddress(h);
    const { flow, code } = await codeMailed(h, address);
    const key = `auth:email:${address}`;
    const before = await hitsOn(h.t, key);
    await submitCode(h.t, flow, address.toUpperCase(), wrongCode(code!));
    expect(await hitsOn(h.t, key)).toBe(before + 2);
  });

  it('with a second factor, the right code leads to second_factor_required, then aal2', async () => {
    const { user, address } = await userWithAddress(h);
    const { secret } = await enrolTotp(h.t, await signedIn(h.t, user.username));
    const { flow, code } = await codeMailed(h, address);
    const first = await submitCode(h.t, flow, address, code!);
    expectError(first, 403, 'forbidden', new RegExp(SECOND_FACTOR_REQUIRED.slice(0, 30)));
    expect(first.cookies.find((cookie) => cookie.name === 'service_session')).toBeUndefined();
    expect(await flowRow(h.t, flow.id)).toMatchObject({
      state: 'second_factor_required',
      first_method: 'email_code',
    });
    h.t.clock.advance(STEP_MS);
    const done = await secondStep(h.t, flow, 'totp', await totpCode(secret, h.t.clock.now()));
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().session).toMatchObject({ authenticated_via: 'email_code', aal: 'aal2' });
  });

  it('an identity disabled after the mail: identity_disabled, only after the right code', async () => {
    const { user, address } = await userWithAddress(h);
    const { flow, code } = await codeMailed(h, address);
    await setIdentityState(h.t.deps, operator, user.id, 'disabled');
    expectError(await submitCode(h.t, flow, address, wrongCode(code!)), 401, 'invalid_credentials');
    expectError(await submitCode(h.t, flow, address, code!), 403, 'identity_disabled');
  });

  it('audits each submission as a login row of the method, naming the identity, not the address', async () => {
    const { user, address } = await userWithAddress(h);
    const { flow, code } = await codeMailed(h, address);
    await submitCode(h.t, flow, address, wrongCode(code!));
    const res = await submitCode(h.t, flow, address, code!);
    const rows = (await auditEntries(h.t)).filter(
      (row) => row.action === 'login' && row.details.flow_id === flow.id,
    );
    expect(rows.map((row) => [row.outcome, row.target_identity, row.details])).toEqual([
      [
        'invalid_credentials',
        user.id,
        { flow_id: flow.id, sign_in_method: 'email_code', address: '127.0.0.1' },
      ],
      [
        'ok',
        user.id,
        {
          flow_id: flow.id,
          sign_in_method: 'email_code',
          address: '127.0.0.1',
          session_id: res.json().session.id,
        },
      ],
    ]);
    expect(JSON.stringify(rows)).not.toContain(address);
  });

  it('refuses what is no request: missing or malformed address, missing code', async () => {
    const flow = await startFlow(h.t);
    expectValidationError(await askForCode(h.t, flow, undefined));
    expectValidationError(await askForCode(h.t, flow, 'not an address'));
    expectValidationError(await askForCode(h.t, flow, 42));
    const missing = await h.t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/email_code`,
      payload: { csrf_token: flow.csrf_token, address: 'a@mail.example.com' },
    });
    expectValidationError(missing);
    expectError(
      await askForCode(h.t, { ...flow, csrf_token: 'x' }, 'a@mail.example.com'),
      401,
      'invalid_token',
    );
    expect((await flowRow(h.t, flow.id)).failed_attempts).toBe(0);
  });

  it('the hosted login page offers it', async () => {
    const page = await h.t.inject({
      method: 'GET',
      url: '/v1/login',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.body).toMatch(/action="\/v1\/flows\/[^"]+\/email_code\/options"/);
  });
});

describeEachDatabase('sign-in by email code, off (the default)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, LOOSE_SIGN_IN_LIMITS);
  });
  afterAll(() => t?.close());

  it('its routes answer 404 not_found and the login page offers nothing', async () => {
    const flow = await startFlow(t);
    expectError(await askForCode(t, flow, 'a@mail.example.com'), 404, 'not_found');
    expectError(await submitCode(t, flow, 'a@mail.example.com', '123456'), 404, 'not_found');
    expect(await flowRow(t, flow.id)).toMatchObject({ state: 'created', failed_attempts: 0 });
    const page = await t.inject({
      method: 'GET',
      url: '/v1/login',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('email_code');
    const form = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/email_code/options`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: BROWSER_ACCEPT },
      payload: new URLSearchParams({
        csrf_token: flow.csrf_token,
        address: 'a@mail.example.com',
      }).toString(),
    });
    expect(form.statusCode).toBe(404);
    expect(form.body).not.toContain('email_code');
  });
});
