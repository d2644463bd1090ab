import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import { newToken } from '../../src/lib/tokens.js';
import { auditEntries, auditSince } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import {
  LOOSE_SIGN_IN_LIMITS,
  PASSWORD,
  addIdentity,
  expectError,
  startFlow,
} from '../flows/helpers.js';
import { ORIGIN, type PasskeyTestApp, createPasskeyApp } from '../passkeys/helpers.js';
import {
  enrolTotp,
  enrolledIdentity,
  passwordStep,
  secondStep,
  signedIn,
  totpCode,
} from '../second-factor/helpers.js';

let counter = 0;
const newName = () => `method-audit-${++counter}`;

/**
 * The `sign_in_method` detail: every `login` row of a browser flow names the method the
 * identity signs in with (a second step also its `second_factor`), and so do the direct
 * sign-in endpoints' rows.
 */
describeEachDatabase('audit rows name the sign-in method', (kind) => {
  let t: PasskeyTestApp;
  let direct: string;
  let external: string;
  beforeAll(async () => {
    t = await createPasskeyApp(kind, {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_AUDIT_FLUSH_MS: '600000',
    });
    direct = await t.token('direct_auth');
    external = await t.token('external_auth');
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  async function loginRows(flowId: string): Promise<AuditEntry[]> {
    return (await auditEntries(t)).filter(
      (row) => row.action === 'login' && row.details.flow_id === flowId,
    );
  }

  it('a passkey sign-in and a refused assertion: sign_in_method passkey', async () => {
    const device = new SoftAuthenticator();
    const token = await t.passwordSignIn();
    expect((await t.register(token, device)).statusCode).toBe(201);

    const flow = await startFlow(t);
    const options = (await t.flowOptions(flow)).json().options;
    const ok = await t.submitPasskey(flow, device.assert(options, { origin: ORIGIN }));
    expect(ok.statusCode, ok.body).toBe(200);
    const [row] = await loginRows(flow.id);
    expect(row).toMatchObject({
      outcome: 'ok',
      target_identity: t.alice.id,
      details: {
        flow_id: flow.id,
        credential_id: expect.any(String),
        sign_in_method: 'passkey',
        address: '127.0.0.1',
        session_id: ok.json().session.id,
      },
    });

    // An assertion made on another site's page; then a refused Origin, before any body.
    const failing = await startFlow(t);
    const failingOptions = (await t.flowOptions(failing)).json().options;
    const refused = await t.submitPasskey(
      failing,
      device.assert(failingOptions, { origin: 'https://evil.example' }),
    );
    expectError(refused, 401, 'invalid_credentials');
    expectError(await t.submitPasskey(failing, {}, 'https://evil.example'), 403, 'forbidden');
    const rows = await loginRows(failing.id);
    expect(rows.map((r) => [r.outcome, r.details.sign_in_method])).toEqual([
      ['invalid_credentials', 'passkey'],
      ['forbidden', 'passkey'],
    ]);
  });

  it('a second factor: the password step, then totp or recovery_code, each with its first method', async () => {
    const { username, identity, secret, recoveryCodes } = await enrolledIdentity(t, newName());

    const { flow, res } = await passwordStep(t, username);
    expect(res.statusCode, res.body).toBe(403);
    expectError(await secondStep(t, flow, 'totp', '000000'), 401, 'invalid_credentials');
    const ok = await secondStep(t, flow, 'totp', await totpCode(secret, t.clock.now()));
    expect(ok.statusCode, ok.body).toBe(200);
    const rows = await loginRows(flow.id);
    expect(rows.map((r) => [r.outcome, r.target_identity, r.details])).toEqual([
      [
        'second_factor_required',
        identity.id,
        { flow_id: flow.id, username, sign_in_method: 'password', address: '127.0.0.1' },
      ],
      [
        'invalid_credentials',
        identity.id,
        {
          flow_id: flow.id,
          second_factor: 'totp',
          sign_in_method: 'password',
          address: '127.0.0.1',
        },
      ],
      [
        'ok',
        identity.id,
        {
          flow_id: flow.id,
          second_factor: 'totp',
          sign_in_method: 'password',
          address: '127.0.0.1',
          session_id: ok.json().session.id,
        },
      ],
    ]);

    const again = await passwordStep(t, username);
    const recovered = await secondStep(t, again.flow, 'recovery_code', recoveryCodes[0]!);
    expect(recovered.statusCode, recovered.body).toBe(200);
    expect((await loginRows(again.flow.id)).at(-1)).toMatchObject({
      outcome: 'ok',
      details: { second_factor: 'recovery_code', sign_in_method: 'password' },
    });
  });

  it('a second step on a flow it cannot know the first method of leaves the field out', async () => {
    const unknown = newToken('flow');
    const res = await t.inject({
      method: 'POST',
      url: `/v1/flows/${unknown}/totp`,
      payload: { code: '123456', csrf_token: 'x' },
    });
    expectError(res, 404, 'not_found');
    const [row] = await loginRows(unknown);
    expect(row).toMatchObject({ outcome: 'not_found', details: { second_factor: 'totp' } });
    expect(row!.details).not.toHaveProperty('sign_in_method');
  });

  it('direct sign-in: password, with its second factor when one is used or presented', async () => {
    const username = newName();
    await addIdentity(t, username);
    const before = (await auditEntries(t)).length;
    const plain = await t.call('POST', '/v1/authenticate/password', direct, {
      username,
      password: PASSWORD,
    });
    expect(plain.statusCode, plain.body).toBe(200);
    const { secret } = await enrolTotp(t, await signedIn(t, username));
    const wrong = await t.call('POST', '/v1/authenticate/password', direct, {
      username,
      password: PASSWORD,
      totp_code: '000000',
    });
    expectError(wrong, 401, 'invalid_credentials');
    const withCode = await t.call('POST', '/v1/authenticate/password', direct, {
      username,
      password: PASSWORD,
      totp_code: await totpCode(secret, t.clock.now()),
    });
    expect(withCode.statusCode, withCode.body).toBe(200);

    const rows = (await auditSince(t, before)).filter(
      (row) => row.action === 'authenticate_password',
    );
    expect(rows.map((row) => [row.outcome, row.details])).toEqual([
      ['ok', { sign_in_method: 'password', session_id: plain.json().session.id }],
      [
        'invalid_credentials',
        {
          username,
          sign_in_method: 'password',
          second_factor: 'totp',
          method: 'POST',
          path: '/v1/authenticate/password',
        },
      ],
      [
        'ok',
        {
          sign_in_method: 'password',
          second_factor: 'totp',
          session_id: withCode.json().session.id,
        },
      ],
    ]);
  });

  it('direct sign-in: register-and-authenticate is password, link sign-in is link', async () => {
    const before = (await auditEntries(t)).length;
    const username = newName();
    const registered = await t.call('POST', '/v1/register-and-authenticate', direct, {
      username,
      password: PASSWORD,
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const taken = await t.call('POST', '/v1/register-and-authenticate', direct, {
      username,
      password: PASSWORD,
    });
    expectError(taken, 409, 'username_taken');
    const pair = { provider: 'example', subject: newName() };
    const linked = await t.call('POST', '/v1/authenticate/link', external, {
      ...pair,
      seed: { username: newName(), display_name: 'Linked' },
    });
    expect(linked.statusCode, linked.body).toBe(201);

    const rows = await auditSince(t, before);
    expect(
      rows
        .filter((row) => row.action !== 'identity_create')
        .map((row) => [row.action, row.outcome, row.details.sign_in_method]),
    ).toEqual([
      ['identity_register_and_authenticate', 'ok', 'password'],
      ['identity_register_and_authenticate', 'username_taken', 'password'],
      ['authenticate_link', 'ok', 'link'],
    ]);
  });
});
