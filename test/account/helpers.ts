import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import type { Identity } from '../../src/domain/identities/identity.js';
import type { TestApp } from '../helpers/app.js';
import { uniqueName } from '../helpers/core.js';

export const PASSWORD = 'correct horse battery';
/** Passes the policy (length, common list, names, zxcvbn score 2). */
export const NEW_PASSWORD = 'violet kettle drums sideways 42';
export const FIREFOX =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:132.0) Gecko/20100101 Firefox/132.0';
export const SAFARI_IOS =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
export const FORM = 'application/x-www-form-urlencoded';
export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

export function addUser(t: TestApp, username = uniqueName('acct')): Promise<Identity> {
  return registerIdentity(
    t.deps,
    { service_name: 'account-tests', service_id: null },
    { username, password: PASSWORD, display_name: `Name ${username}` },
  );
}

export interface BrowserSession {
  token: string;
  id: string;
  cookie: string;
}

/** A sign-in through a login flow (JSON), as a browser with this User-Agent and address. */
export async function browserSignIn(
  t: TestApp,
  username: string,
  options: { userAgent?: string; address?: string; password?: string } = {},
): Promise<BrowserSession> {
  const headers = options.userAgent ? { 'user-agent': options.userAgent } : {};
  const remoteAddress = options.address ?? '127.0.0.1';
  const flow = await t.inject({ method: 'GET', url: '/v1/login', headers, remoteAddress });
  expect(flow.statusCode, flow.body).toBe(200);
  const res = await t.inject({
    method: 'POST',
    url: `/v1/flows/${flow.json().id}/password`,
    headers,
    remoteAddress,
    payload: {
      username,
      password: options.password ?? PASSWORD,
      csrf_token: flow.json().csrf_token,
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  const token = res.cookies.find((cookie) => cookie.name === 'service_session')!.value;
  return { token, id: res.json().session.id, cookie: `service_session=${token}` };
}

/** A request from the signed-in browser: its cookie, and JSON unless a payload says otherwise. */
export function asUser(
  t: TestApp,
  session: Pick<BrowserSession, 'cookie'> | null,
  options: InjectOptions & { csrf?: string },
): Promise<LightMyRequestResponse> {
  const { csrf, headers, ...rest } = options;
  return t.inject({
    ...rest,
    headers: {
      ...(session ? { cookie: session.cookie } : {}),
      ...(csrf === undefined ? {} : { 'x-csrf-token': csrf }),
      ...headers,
    },
  });
}

export async function csrfOf(t: TestApp, session: BrowserSession): Promise<string> {
  const res = await asUser(t, session, { method: 'GET', url: '/v1/account/profile' });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().csrf_token as string;
}

export async function whoamiStatus(t: TestApp, session: BrowserSession): Promise<number> {
  return (await asUser(t, session, { method: 'GET', url: '/v1/whoami' })).statusCode;
}

/** A password sign-in through the service API; the status only. */
export async function passwordWorks(
  t: TestApp,
  token: string,
  username: string,
  password: string,
): Promise<boolean> {
  const res = await t.call('POST', '/v1/authenticate/password', token, { username, password });
  return res.statusCode === 200;
}
