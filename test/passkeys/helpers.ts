import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { DatabaseKind } from '../helpers/databases.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import {
  type FlowTestApp,
  PASSWORD,
  type StartedFlow,
  createFlowApp,
  sessionTokenOf,
  startFlow,
} from '../flows/helpers.js';

/** The service's public origin in these tests: the relying party id is its host. */
export const ORIGIN = 'https://id.example';
export const RP_ID = 'id.example';

export interface PasskeyTestApp extends FlowTestApp {
  /** A password sign-in of alice through a flow: the session cookie's token. */
  passwordSignIn(): Promise<string>;
  /** The account page's CSRF token for the session. */
  csrfFor(token: string): Promise<string>;
  account(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    token: string,
    options?: { body?: unknown; csrf?: string | null; origin?: string | null },
  ): Promise<LightMyRequestResponse>;
  /** Options, a new passkey on `authenticator` and its registration; the 201 answer. */
  register(
    token: string,
    authenticator: SoftAuthenticator,
    name?: string,
  ): Promise<LightMyRequestResponse>;
  flowOptions(flow: StartedFlow, origin?: string | null): Promise<LightMyRequestResponse>;
  submitPasskey(
    flow: StartedFlow,
    credential: unknown,
    origin?: string | null,
  ): Promise<LightMyRequestResponse>;
  /** A whole passkey sign-in: a flow, its options, the assertion, the submission. */
  passkeySignIn(authenticator: SoftAuthenticator): Promise<LightMyRequestResponse>;
}

export async function createPasskeyApp(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): Promise<PasskeyTestApp> {
  const t = await createFlowApp(kind, { SERVICE_PUBLIC_URL: ORIGIN, ...env });
  const own = env.SERVICE_PUBLIC_URL ?? ORIGIN;
  const csrfs = new Map<string, string>();

  const helpers: Omit<PasskeyTestApp, keyof FlowTestApp> = {
    async passwordSignIn() {
      const flow = await startFlow(t);
      const res = await t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/password`,
        headers: { origin: own },
        payload: { username: 'alice', password: PASSWORD, csrf_token: flow.csrf_token },
      });
      expect(res.statusCode, res.body).toBe(200);
      return sessionTokenOf(res);
    },
    async csrfFor(token) {
      const known = csrfs.get(token);
      if (known) return known;
      const page = await t.inject({
        method: 'GET',
        url: '/v1/account/passkeys',
        headers: { accept: 'text/html' },
        cookies: { service_session: token },
      });
      expect(page.statusCode, page.body).toBe(200);
      const csrf = /data-csrf="([^"]+)"/.exec(page.body)![1]!;
      csrfs.set(token, csrf);
      return csrf;
    },
    async account(method, url, token, options = {}) {
      const csrf = options.csrf === undefined ? await helpers.csrfFor(token) : options.csrf;
      const origin = options.origin === undefined ? own : options.origin;
      return t.inject({
        method,
        url,
        headers: {
          accept: 'application/json',
          ...(csrf === null ? {} : { 'x-csrf-token': csrf }),
          ...(origin === null ? {} : { origin }),
        },
        cookies: { service_session: token },
        ...(options.body === undefined ? {} : { payload: options.body as object }),
      });
    },
    async register(token, authenticator, name) {
      const options = await helpers.account('POST', '/v1/account/passkeys/options', token, {
        body: {},
      });
      expect(options.statusCode, options.body).toBe(200);
      const credential = authenticator.register(options.json().options, { origin: own });
      return helpers.account('POST', '/v1/account/passkeys', token, {
        body: { credential, ...(name === undefined ? {} : { name }) },
      });
    },
    flowOptions(flow, origin: string | null = own) {
      return t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/passkey/options`,
        headers: origin === null ? {} : { origin },
        payload: { csrf_token: flow.csrf_token },
      });
    },
    submitPasskey(flow, credential, origin: string | null = own) {
      return t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/passkey`,
        headers: origin === null ? {} : { origin },
        payload: { csrf_token: flow.csrf_token, credential },
      });
    },
    async passkeySignIn(authenticator) {
      const flow = await startFlow(t);
      const options = await helpers.flowOptions(flow);
      expect(options.statusCode, options.body).toBe(200);
      const credential = authenticator.assert(options.json().options, { origin: own });
      return helpers.submitPasskey(flow, credential);
    },
  };
  return Object.assign(t, helpers);
}
