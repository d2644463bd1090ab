import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, expect } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { OutboxCounters, type OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { addUser, asUser, browserSignIn, csrfOf, type BrowserSession } from '../account/helpers.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import type { DatabaseKind } from '../helpers/databases.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';

export const PUBLIC_URL = 'http://localhost:3000';
export const QUIET_LOG = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The outbox worker of `t`, sending to `smtp`: what `tessera serve` runs, drained by hand. */
export function courierFor(t: TestApp, smtp: TestSmtp): OutboxWorker {
  return buildCourier(
    { smtpUrl: smtp.url, from: 'no-reply@example.com', templatesDir: null },
    { store: t.deps.store, clock: t.clock, counters: new OutboxCounters(), log: QUIET_LOG },
  );
}

export const codeOf = (mail: ParsedMail) => /\b(\d{6})\b/.exec(mail.text ?? '')![1]!;
export const linkOf = (mail: ParsedMail) =>
  /(http\S+\/v1\/verification\?\S+)/.exec(mail.text ?? '')![1]!;
/** A six-digit code that is not `code`. */
export const wrongCode = (code: string) => (code === '000000' ? '111111' : '000000');

export interface Started {
  username: string;
  identityId: string;
  session: BrowserSession;
  id: string;
  csrf: string;
  mail: ParsedMail;
  newAddress: string;
  oldAddress: string;
}

export interface VerificationHarness {
  t: TestApp;
  smtp: TestSmtp;
  worker: OutboxWorker;
  /** A service token with identity_write and identity_read. */
  writer: string;
  /** Sends what the outbox holds; answers the mails that arrived since `before`. */
  mailsSince(before: number): Promise<ParsedMail[]>;
  /** A user with a verified address asks to change it; the mail to the new one arrives. */
  startChange(): Promise<Started>;
  emailOf(identityId: string): Promise<{ email: string | null; email_verified: boolean }>;
  submit(
    started: Pick<Started, 'id' | 'csrf'>,
    body: Record<string, string>,
  ): ReturnType<TestApp['inject']>;
}

/** What every mail-sending suite starts from (`useMailApp`). */
export type MailHarness = Pick<
  VerificationHarness,
  't' | 'smtp' | 'worker' | 'writer' | 'mailsSince'
>;

/**
 * A test app (SERVICE_PUBLIC_URL set, and `env`), a real SMTP server and the app's outbox
 * worker, for the suite that calls this; closed after it. The suites' harnesses add their
 * own calls to what this answers.
 */
export function useMailApp(kind: DatabaseKind, env: Record<string, string> = {}): MailHarness {
  const h = {} as MailHarness;
  beforeAll(async () => {
    h.t = await createTestApp(kind, {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_PUBLIC_URL: PUBLIC_URL,
      ...env,
    });
    h.smtp = await startTestSmtp();
    h.worker = courierFor(h.t, h.smtp);
    h.writer = await h.t.token('identity_write', 'identity_read');
  });
  afterAll(async () => {
    await h.worker?.stop();
    await h.smtp?.stop();
    await h.t?.close();
  });
  h.mailsSince = async (before) => {
    await h.worker.drain();
    return h.smtp.received.slice(before);
  };
  return h;
}

/** `useMailApp` with the address-change calls. */
export function useVerificationApp(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): VerificationHarness {
  const h = useMailApp(kind, env) as VerificationHarness;
  h.emailOf = async (identityId) =>
    (await h.t.call('GET', `/v1/identities/${identityId}`, h.writer)).json();
  h.submit = (started, body) =>
    h.t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}`,
      payload: { csrf_token: started.csrf, ...body },
    });
  h.startChange = async () => {
    const { t } = h;
    const user = await addUser(t);
    const oldAddress = `${user.username}@old.example.com`;
    const set = await t.call('PUT', `/v1/identities/${user.id}/email`, h.writer, {
      email: oldAddress,
      verified: true,
    });
    expect(set.statusCode, set.body).toBe(200);
    const session = await browserSignIn(t, user.username);
    const newAddress = `${user.username}@new.example.com`;
    await h.worker.drain();
    const before = h.smtp.received.length;
    const res = await asUser(t, session, {
      method: 'POST',
      url: '/v1/account/email',
      csrf: await csrfOf(t, session),
      payload: { email: newAddress },
    });
    expect(res.statusCode, res.body).toBe(202);
    const { verification } = res.json();
    expect(verification).toMatchObject({ state: 'pending', address: newAddress });
    const mails = await h.mailsSince(before);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toMatchObject({ text: newAddress });
    return {
      username: user.username,
      identityId: user.id,
      session,
      id: verification.id,
      csrf: verification.csrf_token,
      mail: mails[0]!,
      newAddress,
      oldAddress,
    };
  };
  return h;
}
