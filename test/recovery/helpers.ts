import type { LightMyRequestResponse } from 'fastify';
import type { ParsedMail } from 'mailparser';
import { expect } from 'vitest';
import type { OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { addUser } from '../account/helpers.js';
import type { TestApp } from '../helpers/app.js';
import type { DatabaseKind } from '../helpers/databases.js';
import type { TestSmtp } from '../helpers/smtp.js';
import { PUBLIC_URL, useMailApp } from '../verification/helpers.js';

export { PUBLIC_URL };
export const codeOf = (mail: ParsedMail) => /\b(\d{6})\b/.exec(mail.text ?? '')![1]!;
export const linkOf = (mail: ParsedMail) =>
  new URL(/(http\S+\/v1\/recovery\?\S+)/.exec(mail.text ?? '')![1]!);

export interface RecoveryFlow {
  id: string;
  csrf_token: string;
  state: string;
  address: string | null;
}

export interface RecoveryHarness {
  t: TestApp;
  smtp: TestSmtp;
  worker: OutboxWorker;
  writer: string;
  /** Sends what the outbox holds; answers the mails that arrived since `before`. */
  mailsSince(before: number): Promise<ParsedMail[]>;
  /** A user whose address is verified (or not). */
  user(verified?: boolean): Promise<{ id: string; username: string; email: string }>;
  start(): Promise<RecoveryFlow>;
  post(
    flow: RecoveryFlow,
    path: string,
    body?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
}

export function useRecoveryApp(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): RecoveryHarness {
  const h = useMailApp(kind, env) as RecoveryHarness;
  h.user = async (verified = true) => {
    const user = await addUser(h.t);
    const email = `${user.username}@example.com`;
    const set = await h.t.call('PUT', `/v1/identities/${user.id}/email`, h.writer, {
      email,
      verified,
    });
    expect(set.statusCode, set.body).toBe(200);
    await h.worker.drain(); // whatever the change itself mails (a notice) is not a recovery mail
    return { id: user.id, username: user.username, email };
  };
  h.start = async () => {
    const res = await h.t.inject({ method: 'GET', url: '/v1/recovery' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  h.post = (flow, path, body = {}) =>
    h.t.inject({
      method: 'POST',
      url: `/v1/recovery/${flow.id}${path}`,
      payload: { csrf_token: flow.csrf_token, ...body },
    });
  return h;
}
