import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { BROWSER_ACCEPT, FORM } from '../flows/helpers.js';

/** Self-service sign-up is on; the address optional unless a suite says otherwise. */
export const OPEN = { SERVICE_REGISTRATION: 'open', SERVICE_REGISTRATION_EMAIL: 'optional' };
/** A password the policy accepts and no test username is part of. */
export const STRONG = 'violet kettle drums sideways 42';

export interface RegistrationFlow {
  id: string;
  csrf_token: string;
  return_to: string | null;
  state: string;
  email: 'optional' | 'required';
}

let counter = 0;
/** A username no other test of the run uses. */
export function uniqueUser(prefix = 'new'): string {
  counter += 1;
  return `${prefix}${Date.now().toString(36)}${counter}`;
}

export async function startRegistration(
  t: Pick<TestApp, 'inject'>,
  returnTo?: string,
): Promise<RegistrationFlow> {
  const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`;
  const res = await t.inject({ method: 'GET', url: `/v1/registration${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as RegistrationFlow;
}

/** A JSON sign-up with a password; `body` adds or replaces fields. */
export function signUp(
  t: Pick<TestApp, 'inject'>,
  flow: Pick<RegistrationFlow, 'id' | 'csrf_token'>,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'POST',
    url: `/v1/registration/${flow.id}/password`,
    headers,
    payload: { csrf_token: flow.csrf_token, password: STRONG, ...body },
  });
}

/** The same sign-up as an HTML form post from the hosted page. */
export function signUpForm(
  t: Pick<TestApp, 'inject'>,
  flowId: string,
  fields: Record<string, string>,
): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'POST',
    url: `/v1/registration/${flowId}/password`,
    headers: { 'content-type': FORM, accept: BROWSER_ACCEPT },
    payload: new URLSearchParams(fields).toString(),
  });
}
