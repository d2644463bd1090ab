import type { ParsedMail } from 'mailparser';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { OutboxCounters, type OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import {
  BROWSER_ACCEPT,
  FORM,
  addUser,
  asUser,
  browserSignIn,
  csrfOf,
  type BrowserSession,
} from '../account/helpers.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import { uniqueName } from '../helpers/core.js';
import { describeEachDatabase, describeOnPostgres } from '../helpers/databases.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';
import { enrolledIdentity, signInWithCode } from '../second-factor/helpers.js';

const PUBLIC_URL = 'http://localhost:3000';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Issue 23 item 4: an address change waits for the mailed code; the code is single-use,
 * expiring, capped; the old address is told once the new one is confirmed.
 */
describeEachDatabase('email verification', (kind) => {
  let t: TestApp;
  let smtp: TestSmtp;
  let worker: OutboxWorker;
  let writer: string;

  beforeAll(async () => {
    t = await createTestApp(kind, { ...LOOSE_SIGN_IN_LIMITS, SERVICE_PUBLIC_URL: PUBLIC_URL });
    smtp = await startTestSmtp();
    worker = buildCourier(
      { smtpUrl: smtp.url, from: 'no-reply@example.com', templatesDir: null },
      { store: t.deps.store, clock: t.clock, counters: new OutboxCounters(), log: quiet },
    );
    writer = await t.token('identity_write', 'identity_read');
  });
  afterAll(async () => {
    await worker?.stop();
    await smtp?.stop();
    await t?.close();
  });

  /** Sends what the outbox holds; answers the mails that arrived since `before`. */
  async function mailsSince(before: number): Promise<ParsedMail[]> {
    await worker.drain();
    return smtp.received.slice(before);
  }
  const codeOf = (mail: ParsedMail) => /\b(\d{6})\b/.exec(mail.text ?? '')![1]!;
  const linkOf = (mail: ParsedMail) =>
    /(http\S+\/v1\/verification\?\S+)/.exec(mail.text ?? '')![1]!;

  interface Started {
    username: string;
    identityId: string;
    session: BrowserSession;
    id: string;
    csrf: string;
    mail: ParsedMail;
    newAddress: string;
    oldAddress: string;
  }

  /** A user with a verified address asks to change it; the mail to the new one arrives. */
  async function startChange(): Promise<Started> {
    const user = await addUser(t);
    const oldAddress = `${user.username}@old.example.com`;
    const set = await t.call('PUT', `/v1/identities/${user.id}/email`, writer, {
      email: oldAddress,
      verified: true,
    });
    expect(set.statusCode, set.body).toBe(200);
    const session = await browserSignIn(t, user.username);
    const newAddress = `${user.username}@new.example.com`;
    await worker.drain();
    const before = smtp.received.length;
    const res = await asUser(t, session, {
      method: 'POST',
      url: '/v1/account/email',
      csrf: await csrfOf(t, session),
      payload: { email: newAddress },
    });
    expect(res.statusCode, res.body).toBe(202);
    const { verification } = res.json();
    expect(verification).toMatchObject({ state: 'pending', address: newAddress });
    const mails = await mailsSince(before);
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
  }

  const emailOf = async (identityId: string) =>
    (await t.call('GET', `/v1/identities/${identityId}`, writer)).json();

  const submit = (started: Pick<Started, 'id' | 'csrf'>, body: Record<string, string>) =>
    t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}`,
      payload: { csrf_token: started.csrf, ...body },
    });

  it('replaces the address only once the mailed code is entered, and tells the old address', async () => {
    const started = await startChange();
    expect(started.mail.subject).toContain(codeOf(started.mail));
    expect(await emailOf(started.identityId)).toMatchObject({
      email: started.oldAddress,
      email_verified: true,
    });

    const flow = await t.inject({ method: 'GET', url: `/v1/verification?id=${started.id}` });
    expect(flow.statusCode, flow.body).toBe(200);
    expect(flow.json()).toMatchObject({
      id: started.id,
      state: 'pending',
      csrf_token: started.csrf,
    });

    const wrong = await submit(started, {
      code: codeOf(started.mail) === '000000' ? '111111' : '000000',
    });
    expect(wrong.statusCode, wrong.body).toBe(401);
    expect(wrong.json().error).toBe('invalid_credentials');

    const before = smtp.received.length;
    const right = await submit(started, { code: codeOf(started.mail) });
    expect(right.statusCode, right.body).toBe(200);
    expect(right.json().identity).toMatchObject({
      email: started.newAddress,
      email_verified: true,
    });
    expect(await emailOf(started.identityId)).toMatchObject({
      email: started.newAddress,
      email_verified: true,
    });

    const notices = await mailsSince(before);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.to).toMatchObject({ text: started.oldAddress });
    expect(notices[0]!.subject).toBe('Your email address was changed');
    expect(notices[0]!.text).toContain(started.newAddress);

    const again = await submit(started, { code: codeOf(started.mail) });
    expect(again.statusCode, again.body).toBe(401);
    expect(again.json().error).toBe('invalid_token');
    const page = await t.inject({
      method: 'GET',
      url: `/v1/verification?id=${started.id}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.statusCode).toBe(401);
    expect(page.body).toContain('Already confirmed');
  });

  it('does not verify when the link is fetched (a mail scanner); the page’s button does', async () => {
    const started = await startChange();
    const link = new URL(linkOf(started.mail));
    for (const accept of [BROWSER_ACCEPT, 'application/json']) {
      const fetched = await t.inject({
        method: 'GET',
        url: `${link.pathname}${link.search}`,
        headers: { accept },
      });
      expect(fetched.statusCode, fetched.body).toBe(200);
    }
    expect((await emailOf(started.identityId)).email).toBe(started.oldAddress);

    const page = await t.inject({
      method: 'GET',
      url: `${link.pathname}${link.search}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.body).toContain('Confirm address');
    const form = new URLSearchParams({
      csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!,
      token: link.searchParams.get('token')!,
    });
    const posted = await t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}`,
      headers: { 'content-type': FORM, accept: BROWSER_ACCEPT },
      payload: form.toString(),
    });
    expect(posted.statusCode, posted.body).toBe(200);
    expect(posted.body).toContain('Email address confirmed');
    expect(await emailOf(started.identityId)).toMatchObject({
      email: started.newAddress,
      email_verified: true,
    });
  });

  it('closes a code after five wrong attempts; the right one is refused then', async () => {
    const started = await startChange();
    const right = codeOf(started.mail);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await submit(started, { code: wrong });
      expect(res.json().error).toBe('invalid_credentials');
    }
    const late = await submit(started, { code: right });
    expect(late.statusCode).toBe(401);
    expect(late.json().error).toBe('invalid_token');
    const flow = await t.inject({ method: 'GET', url: `/v1/verification?id=${started.id}` });
    expect(flow.json().state).toBe('failed');
    expect((await emailOf(started.identityId)).email).toBe(started.oldAddress);
  });

  it('refuses an expired code', async () => {
    const started = await startChange();
    t.clock.advance(15 * 60_000 + 1);
    const res = await submit(started, { code: codeOf(started.mail) });
    expect(res.json().error).toBe('invalid_token');
    const flow = await t.inject({ method: 'GET', url: `/v1/verification?id=${started.id}` });
    expect(flow.json().state).toBe('expired');
    expect((await emailOf(started.identityId)).email).toBe(started.oldAddress);

    // The page offers a new code; it starts the time anew.
    const page = await t.inject({
      method: 'GET',
      url: `/v1/verification?id=${started.id}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('This code has expired');
    const before = smtp.received.length;
    const resent = await t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}/resend`,
      payload: { csrf_token: started.csrf },
    });
    expect(resent.statusCode, resent.body).toBe(200);
    expect(resent.json().state).toBe('pending');
    const [mail] = await mailsSince(before);
    const done = await submit(started, { code: codeOf(mail!) });
    expect(done.statusCode, done.body).toBe(200);
  });

  it('lets exactly one of concurrent right submissions through', async () => {
    const started = await startChange();
    const code = codeOf(started.mail);
    const results = await Promise.all(Array.from({ length: 8 }, () => submit(started, { code })));
    const statuses = results.map((res) => res.statusCode).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    for (const res of results.filter((res) => res.statusCode !== 200)) {
      expect(res.json().error).toBe('invalid_token');
    }
    // One change, one notice to the old address.
    const notices = await mailsSince(smtp.received.length);
    expect(notices.map((mail) => mail.to)).toMatchObject([{ text: started.oldAddress }]);
  });

  it('limits resends per identity; a resent code replaces the earlier one', async () => {
    const started = await startChange();
    // The first send counted one of the five an hour.
    let latest = started.mail;
    for (let i = 0; i < 4; i++) {
      const before = smtp.received.length;
      const res = await t.inject({
        method: 'POST',
        url: `/v1/verification/${started.id}/resend`,
        payload: { csrf_token: started.csrf },
      });
      expect(res.statusCode, res.body).toBe(200);
      const mails = await mailsSince(before);
      expect(mails).toHaveLength(1);
      latest = mails[0]!;
    }
    const refused = await t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}/resend`,
      payload: { csrf_token: started.csrf },
    });
    expect(refused.statusCode, refused.body).toBe(429);
    if (codeOf(latest) !== codeOf(started.mail)) {
      const old = await submit(started, { code: codeOf(started.mail) });
      expect(old.json().error).toBe('invalid_credentials');
    }
    const res = await submit(started, { code: codeOf(latest) });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses an address another identity holds (409 email_taken), now and at verification', async () => {
    const started = await startChange();
    const other = await addUser(t);
    const taken = await t.call('PUT', `/v1/identities/${other.id}/email`, writer, {
      email: `${uniqueName('taken')}@example.com`,
    });
    expect(taken.statusCode).toBe(200);
    const res = await asUser(t, started.session, {
      method: 'POST',
      url: '/v1/account/email',
      csrf: await csrfOf(t, started.session),
      payload: { email: taken.json().email },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error).toBe('email_taken');

    // The pending address is taken meanwhile: the code stays unused, the change refused.
    const grab = await t.call('PUT', `/v1/identities/${other.id}/email`, writer, {
      email: started.newAddress,
    });
    expect(grab.statusCode, grab.body).toBe(200);
    const late = await submit(started, { code: codeOf(started.mail) });
    expect(late.statusCode, late.body).toBe(409);
    expect((await emailOf(started.identityId)).email).toBe(started.oldAddress);
  });

  it('refuses an aal1 session of an identity with TOTP (step-up); its aal2 sign-in may', async () => {
    const enrolled = await enrolledIdentity(t, uniqueName('totp'));
    const change = async (token: string) => {
      const session = { cookie: `service_session=${token}` };
      return asUser(t, session, {
        method: 'POST',
        url: '/v1/account/email',
        csrf: await csrfOf(t, { ...session, token, id: '' }),
        payload: { email: `${enrolled.username}@example.com` },
      });
    };
    const weak = await change(enrolled.session);
    expect(weak.statusCode, weak.body).toBe(403);
    expect(weak.json().error).toBe('forbidden');
    const strong = await change(await signInWithCode(t, enrolled.username, enrolled.secret));
    expect(strong.statusCode, strong.body).toBe(202);
  });

  it('mails a backend-set address a code when asked (send_verification), and only then', async () => {
    const user = await addUser(t);
    await worker.drain();
    const before = smtp.received.length;
    const silent = await t.call('PUT', `/v1/identities/${user.id}/email`, writer, {
      email: `${user.username}@quiet.example.com`,
    });
    expect(silent.statusCode, silent.body).toBe(200);
    expect(await mailsSince(before)).toHaveLength(0);

    const address = `${user.username}@backend.example.com`;
    const set = await t.call('PUT', `/v1/identities/${user.id}/email`, writer, {
      email: address,
      send_verification: true,
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ email: address, email_verified: false });
    const [mail] = await mailsSince(before);
    expect(mail!.to).toMatchObject({ text: address });
    const link = new URL(linkOf(mail!));
    expect(link.origin).toBe(PUBLIC_URL);
    const id = link.searchParams.get('id')!;
    const flow = await t.inject({ method: 'GET', url: `/v1/verification?id=${id}` });
    const done = await submit({ id, csrf: flow.json().csrf_token }, { code: codeOf(mail!) });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().identity).toMatchObject({ email: address, email_verified: true });
    // The same address: nobody to tell.
    expect(await mailsSince(smtp.received.length)).toHaveLength(0);

    const refused = await t.call('PUT', `/v1/identities/${user.id}/email`, writer, {
      email: address,
      verified: true,
      send_verification: true,
    });
    expect(refused.statusCode).toBe(422);
  });
});

/** Two instances on one PostgreSQL schema: racing right codes, split between them, use it once. */
describeOnPostgres('email verification on two instances', () => {
  it('lets exactly one of concurrent right submissions through, across instances', async () => {
    const first = await createTestApp('postgres', LOOSE_SIGN_IN_LIMITS);
    const second = await createTestApp('postgres', LOOSE_SIGN_IN_LIMITS, first.db);
    try {
      const user = await addUser(first);
      const session = await browserSignIn(first, user.username);
      const started = await asUser(first, session, {
        method: 'POST',
        url: '/v1/account/email',
        csrf: await csrfOf(first, session),
        payload: { email: `${user.username}@two.example.com` },
      });
      expect(started.statusCode, started.body).toBe(202);
      const { id, csrf_token: csrf } = started.json().verification;
      const mailer = await startTestSmtp();
      const courier = buildCourier(
        { smtpUrl: mailer.url, from: 'no-reply@example.com', templatesDir: null },
        {
          store: second.deps.store,
          clock: second.clock,
          counters: new OutboxCounters(),
          log: quiet,
        },
      );
      await courier.drain();
      await courier.stop();
      await mailer.stop();
      const code = /\b(\d{6})\b/.exec(mailer.received[0]!.text ?? '')![1]!;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? first : second).inject({
            method: 'POST',
            url: `/v1/verification/${id}`,
            payload: { csrf_token: csrf, code },
          }),
        ),
      );
      expect(results.filter((res) => res.statusCode === 200)).toHaveLength(1);
      expect(results.filter((res) => res.statusCode === 401)).toHaveLength(7);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
