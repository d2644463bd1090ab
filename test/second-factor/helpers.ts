import type { LightMyRequestResponse } from 'fastify';
import { generate } from 'otplib';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import {
  PASSWORD,
  type StartedFlow,
  addIdentity,
  sessionTokenOf,
  startFlow,
  submit,
} from '../flows/helpers.js';

/** One RFC 6238 step. */
export const STEP_MS = 30_000;

/** The code an authenticator app shows at `atMs`: computed by otplib, as the app would. */
export function totpCode(secret: string, atMs: number): Promise<string> {
  return generate({ secret, epoch: Math.floor(atMs / 1000) });
}

/** A JSON password submission; answers the flow and the response. */
export async function passwordStep(
  t: TestApp,
  username = 'alice',
): Promise<{ flow: StartedFlow; res: LightMyRequestResponse }> {
  const flow = await startFlow(t);
  const res = await submit(t, flow.id, {
    username,
    password: PASSWORD,
    csrf_token: flow.csrf_token,
  });
  return { flow, res };
}

/** A JSON submission of a second factor to a waiting flow. */
export function secondStep(
  t: TestApp,
  flow: StartedFlow,
  method: 'totp' | 'recovery_code',
  value: string,
): Promise<LightMyRequestResponse> {
  const field = method === 'totp' ? 'code' : 'recovery_code';
  return t.inject({
    method: 'POST',
    url: `/v1/flows/${flow.id}/${method}`,
    payload: { [field]: value, csrf_token: flow.csrf_token },
  });
}

/** A session for `username` by the hosted flow's JSON API (no second factor yet). */
export async function signedIn(t: TestApp, username = 'alice'): Promise<string> {
  const { res } = await passwordStep(t, username);
  expect(res.statusCode, res.body).toBe(200);
  return sessionTokenOf(res);
}

export function cookieOf(token: string): Record<string, string> {
  return { cookie: `service_session=${token}` };
}

/** The account page's JSON status and CSRF token. */
export async function accountStatus(t: TestApp, session: string) {
  const res = await t.inject({
    method: 'GET',
    url: '/v1/account/two-factor',
    headers: { ...cookieOf(session), accept: 'application/json' },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    enabled: boolean;
    pending: boolean;
    methods: string[];
    since: string | null;
    recovery_codes_left: number;
    csrf_token: string;
  };
}

/** A JSON POST to an account endpoint with the session's CSRF token. */
export async function accountPost(
  t: TestApp,
  session: string,
  path: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  const { csrf_token: csrf } = await accountStatus(t, session);
  return t.inject({
    method: 'POST',
    url: `/v1/account/two-factor${path}`,
    headers: { ...cookieOf(session), 'x-csrf-token': csrf, ...headers },
    payload: body,
  });
}

/**
 * Enrols TOTP for the session's identity through the JSON endpoints and moves the clock
 * one step on, so the next code is not the (spent) confirmation code's.
 */
export async function enrolTotp(
  t: TestApp,
  session: string,
): Promise<{ secret: string; recoveryCodes: string[] }> {
  const started = await accountPost(t, session, '/totp');
  expect(started.statusCode, started.body).toBe(200);
  const { secret } = started.json() as { secret: string };
  const confirmed = await accountPost(t, session, '/totp/confirm', {
    code: await totpCode(secret, t.clock.now()),
  });
  expect(confirmed.statusCode, confirmed.body).toBe(200);
  t.clock.advance(STEP_MS);
  return {
    secret,
    recoveryCodes: (confirmed.json() as { recovery_codes: string[] }).recovery_codes,
  };
}

/** A new identity `username`, signed in (the session) and with TOTP enrolled. */
export async function enrolledIdentity(t: TestApp, username: string) {
  const identity = await addIdentity(t, username);
  const session = await signedIn(t, username);
  const { secret, recoveryCodes } = await enrolTotp(t, session);
  return { username, identity, session, secret, recoveryCodes };
}

/**
 * The step-up of an identity with TOTP: a fresh sign-in through a login flow, password then
 * a code of the next time step (the last one may be spent). Answers the aal2 session token.
 */
export async function signInWithCode(t: TestApp, username: string, secret: string) {
  t.clock.advance(STEP_MS);
  const { flow, res } = await passwordStep(t, username);
  expect(res.statusCode, res.body).toBe(403);
  const done = await secondStep(t, flow, 'totp', await totpCode(secret, t.clock.now()));
  expect(done.statusCode, done.body).toBe(200);
  expect(done.json().session.aal).toBe('aal2');
  return sessionTokenOf(done);
}
