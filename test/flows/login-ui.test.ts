import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  APP_ORIGIN,
  BROWSER_ACCEPT,
  type FlowTestApp,
  PASSWORD,
  createFlowApp,
  flowRow,
  startFlow,
  submit,
} from './helpers.js';

const UI_ORIGIN = 'https://login.example';

/**
 * Issue 11 item 7: the external login UI (SERVICE_LOGIN_UI_URL) gets its flow's CSRF token
 * from GET /v1/flows/{id}, but only from the browser the 303 bound the flow to, and only
 * when asking from its own origin.
 */
describeEachDatabase('external login UI: the flow bound to the browser', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_LOGIN_UI_URL: `${UI_ORIGIN}/signin`,
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
    });
  });
  afterAll(() => t?.close());

  /** A browser's navigation to /v1/login: the 303, its flow id and its binding cookie. */
  async function redirectToUi(): Promise<{
    id: string;
    cookie: string;
    res: LightMyRequestResponse;
  }> {
    const res = await t.inject({
      method: 'GET',
      url: `/v1/login?return_to=${encodeURIComponent(`${APP_ORIGIN}/home`)}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(res.statusCode).toBe(303);
    const id = new URL(res.headers.location as string).searchParams.get('flow')!;
    const binding = res.cookies.find((c) => c.name === 'service_flow');
    return { id, cookie: `service_flow=${binding?.value ?? ''}`, res };
  }

  const readFlow = (id: string, headers: Record<string, string>) =>
    t.inject({ method: 'GET', url: `/v1/flows/${id}`, headers });

  it('binds the flow at the 303 with a cookie scoped to that flow’s URLs', async () => {
    const { id, res } = await redirectToUi();
    const header = res.headers['set-cookie'] as string;
    const [pair, ...attributes] = header.split('; ');
    expect(pair).toMatch(/^service_flow=[A-Za-z0-9_-]{43}$/);
    expect(attributes.sort()).toEqual(
      ['HttpOnly', 'Max-Age=900', `Path=/v1/flows/${id}`, 'SameSite=Lax', 'Secure'].sort(),
    );
    // The cookie is not the CSRF token itself.
    expect(pair).not.toContain((await flowRow(t, id)).csrf_token);
  });

  it('hands the CSRF token to the login UI’s origin in the bound browser, with CORS', async () => {
    const { id, cookie } = await redirectToUi();
    const res = await readFlow(id, { origin: UI_ORIGIN, cookie });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
    expect(res.headers['access-control-allow-credentials']).toBe('true');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toMatchObject({
      id,
      state: 'created',
      csrf_token: (await flowRow(t, id)).csrf_token,
      errors: [],
    });
  });

  it('withholds it without the cookie, from another origin, with no Origin, or with another flow’s cookie', async () => {
    const { id, cookie } = await redirectToUi();
    const other = await redirectToUi();
    const cases: Record<string, string>[] = [
      { origin: UI_ORIGIN },
      { origin: UI_ORIGIN, cookie: 'service_flow=forged' },
      { origin: UI_ORIGIN, cookie: other.cookie },
      { origin: APP_ORIGIN, cookie },
      { origin: 'https://evil.example', cookie },
      { cookie },
    ];
    for (const headers of cases) {
      const res = await readFlow(id, headers);
      expect(res.statusCode).toBe(200);
      expect(Object.keys(res.json()).sort()).toEqual(
        ['errors', 'expires_at', 'flow_id', 'id', 'issued_at', 'return_to', 'state'].sort(),
      );
    }
  });

  it('the UI completes the flow with the token; the binding cookie is then cleared', async () => {
    const { id, cookie } = await redirectToUi();
    const { csrf_token } = (await readFlow(id, { origin: UI_ORIGIN, cookie })).json();
    const res = await submit(
      t,
      id,
      { username: 'alice', password: PASSWORD, csrf_token },
      { origin: UI_ORIGIN, cookie },
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().return_to).toBe(`${APP_ORIGIN}/home`);
    const cleared = res.cookies.find((c) => c.name === 'service_flow');
    expect(cleared).toMatchObject({ value: '', path: `/v1/flows/${id}` });
    expect(res.cookies.find((c) => c.name === 'service_session')?.value).toMatch(/^tess_s_/);
  });

  it('sets no binding cookie for API clients, and none for the token they already hold', async () => {
    const res = await t.inject({ method: 'GET', url: '/v1/login' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
    const flow = await startFlow(t);
    const signedIn = await submit(t, flow.id, {
      username: 'alice',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(signedIn.cookies.map((c) => c.name)).toEqual(['service_session']);
  });
});

describeEachDatabase('hosted page mode sets no binding cookie', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind);
  });
  afterAll(() => t?.close());

  it('renders the page with the token in it and no cookie', async () => {
    const res = await t.inject({
      method: 'GET',
      url: '/v1/login',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['set-cookie']).toBeUndefined();
  });
});
