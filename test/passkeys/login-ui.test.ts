import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { expectError, startFlow } from '../flows/helpers.js';
import { type PasskeyTestApp, createPasskeyApp } from './helpers.js';

const SERVICE = 'https://id.example.com';
const LOGIN_UI = 'https://login.example.com';

/** An operator's own login UI on a sibling host, with the relying party id their parent. */
describeEachDatabase('passkeys from an operator login UI', (kind) => {
  let t: PasskeyTestApp;
  beforeAll(async () => {
    t = await createPasskeyApp(kind, {
      SERVICE_PUBLIC_URL: SERVICE,
      SERVICE_LOGIN_UI_URL: `${LOGIN_UI}/signin`,
      SERVICE_WEBAUTHN_RP_ID: 'example.com',
    });
  });
  afterAll(() => t?.close());

  it('the UI origin may preflight and call the passkey routes, and its assertions verify', async () => {
    const flow = await startFlow(t);
    for (const path of ['passkey/options', 'passkey']) {
      const preflight = await t.inject({
        method: 'OPTIONS',
        url: `/v1/flows/${flow.id}/${path}`,
        headers: { origin: LOGIN_UI, 'access-control-request-method': 'POST' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(LOGIN_UI);
      expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    }

    const token = await t.passwordSignIn();
    const device = new SoftAuthenticator();
    const options = await t.account('POST', '/v1/account/passkeys/options', token, {
      body: {},
      origin: SERVICE,
    });
    expect(options.json().options.rp).toEqual({ id: 'example.com', name: 'Tessera' });
    const credential = device.register(options.json().options, { origin: SERVICE });
    const added = await t.account('POST', '/v1/account/passkeys', token, {
      body: { credential },
      origin: SERVICE,
    });
    expect(added.statusCode, added.body).toBe(201);

    const issued = await t.flowOptions(flow, LOGIN_UI);
    expect(issued.headers['access-control-allow-origin']).toBe(LOGIN_UI);
    expect(issued.json().options).toMatchObject({
      rpId: 'example.com',
      allowCredentials: [],
      userVerification: 'required',
    });
    const assertion = device.assert(issued.json().options, { origin: LOGIN_UI });
    const signedIn = await t.submitPasskey(flow, assertion, LOGIN_UI);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    expect(signedIn.headers['access-control-allow-origin']).toBe(LOGIN_UI);
    expect(signedIn.json().session.authenticated_via).toBe('passkey');

    // A page on another sibling host is no origin of ours, even inside the RP id.
    const other = await startFlow(t);
    const fromElsewhere = device.assert((await t.flowOptions(other)).json().options, {
      origin: 'https://evil.example.com',
    });
    expectError(await t.submitPasskey(other, fromElsewhere, null), 401, 'invalid_credentials');
  });
});
