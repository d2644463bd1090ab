import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Identity } from '../../src/domain/identities/identity.js';
import { addUser } from '../account/helpers.js';
import type { TestApp } from '../helpers/app.js';
import { type StartedFlow, startFlow } from '../flows/helpers.js';
import { codeOf, type VerificationHarness } from '../verification/helpers.js';

export const EMAIL_CODE_ON = { SERVICE_SIGN_IN_EMAIL_CODE: 'on' };

/** A new user whose address is `<username>@<domain>`, verified unless told otherwise. */
export async function userWithAddress(
  h: Pick<VerificationHarness, 't' | 'writer'>,
  options: { verified?: boolean; domain?: string } = {},
): Promise<{ user: Identity; address: string }> {
  const user = await addUser(h.t);
  const address = `${user.username}@${options.domain ?? 'mail.example.com'}`;
  const set = await h.t.call('PUT', `/v1/identities/${user.id}/email`, h.writer, {
    email: address,
    verified: options.verified ?? true,
  });
  expect(set.statusCode, set.body).toBe(200);
  return { user, address };
}

/** `POST /v1/flows/{id}/email_code/options` (JSON) on `t`. */
export function askForCode(
  t: TestApp,
  flow: Pick<StartedFlow, 'id' | 'csrf_token'>,
  address: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'POST',
    url: `/v1/flows/${flow.id}/email_code/options`,
    headers,
    payload:
      address === undefined
        ? { csrf_token: flow.csrf_token }
        : { csrf_token: flow.csrf_token, address },
  });
}

/** `POST /v1/flows/{id}/email_code` (JSON) on `t`. */
export function submitCode(
  t: TestApp,
  flow: Pick<StartedFlow, 'id' | 'csrf_token'>,
  address: string,
  code: string,
): Promise<LightMyRequestResponse> {
  return t.inject({
    method: 'POST',
    url: `/v1/flows/${flow.id}/email_code`,
    payload: { csrf_token: flow.csrf_token, address, code },
  });
}

/** A flow, a code asked for `address`, and the mails that request sent (one, for a known address). */
export async function codeMailed(
  h: VerificationHarness,
  address: string,
): Promise<{ flow: StartedFlow; code: string | undefined; answer: LightMyRequestResponse }> {
  const flow = await startFlow(h.t);
  await h.worker.drain();
  const before = h.smtp.received.length;
  const answer = await askForCode(h.t, flow, address);
  const mails = await h.mailsSince(before);
  expect(mails.length).toBeLessThanOrEqual(1);
  return { flow, answer, code: mails[0] ? codeOf(mails[0]) : undefined };
}
