import { expect, it } from 'vitest';
import {
  BROWSER_ACCEPT,
  FORM,
  addUser,
  asUser,
  browserSignIn,
  csrfOf,
} from '../account/helpers.js';
import { createTestApp } from '../helpers/app.js';
import { describeEachDatabase, describeOnPostgres } from '../helpers/databases.js';
import { startTestSmtp } from '../helpers/smtp.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';
import { codeOf, courierFor, linkOf, useVerificationApp } from './helpers.js';

/**
 * Issue 23 item 4: an address change waits for the mailed code; the code is single-use,
 * expiring, capped; the old address is told once the new one is confirmed.
 */
describeEachDatabase('email verification', (kind) => {
  const v = useVerificationApp(kind);

  it('replaces the address only once the mailed code is entered, and tells the old address', async () => {
    const started = await v.startChange();
    expect(started.mail.subject).toContain(codeOf(started.mail));
    expect(await v.emailOf(started.identityId)).toMatchObject({
      email: started.oldAddress,
      email_verified: true,
    });

    const flow = await v.t.inject({ method: 'GET', url: `/v1/verification?id=${started.id}` });
    expect(flow.statusCode, flow.body).toBe(200);
    expect(flow.json()).toMatchObject({
      id: started.id,
      state: 'pending',
      csrf_token: started.csrf,
    });

    const wrong = await v.submit(started, {
      code: codeOf(started.mail) === '000000' ? '111111' : '000000',
    });
    expect(wrong.statusCode, wrong.body).toBe(401);
    expect(wrong.json().error).toBe('invalid_credentials');

    const before = v.smtp.received.length;
    const right = await v.submit(started, { code: codeOf(started.mail) });
    expect(right.statusCode, right.body).toBe(200);
    expect(right.json().identity).toMatchObject({
      email: started.newAddress,
      email_verified: true,
    });
    expect(await v.emailOf(started.identityId)).toMatchObject({
      email: started.newAddress,
      email_verified: true,
    });

    const notices = await v.mailsSince(before);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.to).toMatchObject({ text: started.oldAddress });
    expect(notices[0]!.subject).toBe('Your email address was changed');
    expect(notices[0]!.text).toContain(started.newAddress);

    const again = await v.submit(started, { code: codeOf(started.mail) });
    expect(again.statusCode, again.body).toBe(401);
    expect(again.json().error).toBe('invalid_token');
    const page = await v.t.inject({
      method: 'GET',
      url: `/v1/verification?id=${started.id}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.statusCode).toBe(401);
    expect(page.body).toContain('Already confirmed');
  });

  it('does not verify when the link is fetched (a mail scanner); the page’s button does', async () => {
    const started = await v.startChange();
    const link = new URL(linkOf(started.mail));
    for (const accept of [BROWSER_ACCEPT, 'application/json']) {
      const fetched = await v.t.inject({
        method: 'GET',
        url: `${link.pathname}${link.search}`,
        headers: { accept },
      });
      expect(fetched.statusCode, fetched.body).toBe(200);
    }
    expect((await v.emailOf(started.identityId)).email).toBe(started.oldAddress);

    const page = await v.t.inject({
      method: 'GET',
      url: `${link.pathname}${link.search}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.body).toContain('Confirm address');
    const form = new URLSearchParams({
      csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page.body)![1]!,
      token: link.searchParams.get('token')!,
    });
    const posted = await v.t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}`,
      headers: { 'content-type': FORM, accept: BROWSER_ACCEPT },
      payload: form.toString(),
    });
    expect(posted.statusCode, posted.body).toBe(200);
    expect(posted.body).toContain('Email address confirmed');
    expect(await v.emailOf(started.identityId)).toMatchObject({
      email: started.newAddress,
      email_verified: true,
    });
  });

  it('closes a code after five wrong attempts; the right one is refused then', async () => {
    const started = await v.startChange();
    const right = codeOf(started.mail);
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await v.submit(started, { code: wrong });
      expect(res.json().error).toBe('invalid_credentials');
    }
    const late = await v.submit(started, { code: right });
    expect(late.statusCode).toBe(401);
    expect(late.json().error).toBe('invalid_token');
    const flow = await v.t.inject({ method: 'GET', url: `/v1/verification?id=${started.id}` });
    expect(flow.json().state).toBe('failed');
    expect((await v.emailOf(started.identityId)).email).toBe(started.oldAddress);
  });

  it('refuses an expired code', async () => {
    const started = await v.startChange();
    v.t.clock.advance(15 * 60_000 + 1);
    const res = await v.submit(started, { code: codeOf(started.mail) });
    expect(res.json().error).toBe('invalid_token');
    const flow = await v.t.inject({ method: 'GET', url: `/v1/verification?id=${started.id}` });
    expect(flow.json().state).toBe('expired');
    expect((await v.emailOf(started.identityId)).email).toBe(started.oldAddress);

    // The page offers a new code; it starts the time anew.
    const page = await v.t.inject({
      method: 'GET',
      url: `/v1/verification?id=${started.id}`,
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('This code has expired');
    const before = v.smtp.received.length;
    const resent = await v.t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}/resend`,
      payload: { csrf_token: started.csrf },
    });
    expect(resent.statusCode, resent.body).toBe(200);
    expect(resent.json().state).toBe('pending');
    const [mail] = await v.mailsSince(before);
    const done = await v.submit(started, { code: codeOf(mail!) });
    expect(done.statusCode, done.body).toBe(200);
  });

  it('lets exactly one of concurrent right submissions through', async () => {
    const started = await v.startChange();
    const code = codeOf(started.mail);
    const results = await Promise.all(Array.from({ length: 8 }, () => v.submit(started, { code })));
    const statuses = results.map((res) => res.statusCode).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    for (const res of results.filter((res) => res.statusCode !== 200)) {
      expect(res.json().error).toBe('invalid_token');
    }
    // One change, one notice to the old address.
    const notices = await v.mailsSince(v.smtp.received.length);
    expect(notices.map((mail) => mail.to)).toMatchObject([{ text: started.oldAddress }]);
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
      const courier = courierFor(second, mailer);
      await courier.drain();
      await courier.stop();
      await mailer.stop();
      const code = codeOf(mailer.received[0]!);
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

describeEachDatabase('email verification with the email_changed notice off', (kind) => {
  const v = useVerificationApp(kind, { SERVICE_MAIL_NOTICES: 'password_changed' });

  it('changes the address and tells nobody (SERVICE_MAIL_NOTICES)', async () => {
    const started = await v.startChange();
    const before = v.smtp.received.length;
    const right = await v.submit(started, { code: codeOf(started.mail) });
    expect(right.statusCode, right.body).toBe(200);
    expect(await v.emailOf(started.identityId)).toMatchObject({ email: started.newAddress });
    expect(await v.mailsSince(before)).toEqual([]);
  });
});
