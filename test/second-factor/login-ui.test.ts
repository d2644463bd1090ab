import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import { type FlowTestApp, addIdentity, createFlowApp, expectError } from '../flows/helpers.js';
import { passwordStep, secondStep, signedIn, enrolTotp, totpCode } from './helpers.js';

const UI_ORIGIN = 'https://login.example';

/**
 * An operator's own login UI (SERVICE_LOGIN_UI_URL) drives the second step from its
 * origin: the routes are in the browser credentials CORS zone, and its Origin may submit.
 */
describeEachDatabase('second factor from an operator’s login UI', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, { SERVICE_LOGIN_UI_URL: `${UI_ORIGIN}/login` });
  });
  afterAll(() => t?.close());

  it('answers the UI origin’s preflight and submission with CORS, and refuses others', async () => {
    await addIdentity(t, 'uma');
    const { secret } = await enrolTotp(t, await signedIn(t, 'uma'));
    const { flow, res } = await passwordStep(t, 'uma');
    expect(res.statusCode).toBe(403);
    for (const method of ['totp', 'recovery_code']) {
      const preflight = await t.inject({
        method: 'OPTIONS',
        url: `/v1/flows/${flow.id}/${method}`,
        headers: {
          origin: UI_ORIGIN,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
      expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    }
    const foreign = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/totp`,
      headers: { origin: 'https://evil.example' },
      payload: { code: await totpCode(secret, t.clock.now()), csrf_token: flow.csrf_token },
    });
    expectError(foreign, 403, 'forbidden');
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();

    const ok = await t.inject({
      method: 'POST',
      url: `/v1/flows/${flow.id}/totp`,
      headers: { origin: UI_ORIGIN },
      payload: { code: await totpCode(secret, t.clock.now()), csrf_token: flow.csrf_token },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
    expect(ok.json().session.aal).toBe('aal2');
    // secondStep is the same call without an Origin header: the flow is done now.
    expectError(await secondStep(t, flow, 'totp', '000000'), 401, 'invalid_token');
  });
});
