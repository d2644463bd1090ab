import { expect, it } from 'vitest';
import { BROWSER_ACCEPT, FORM, addUser, asUser, csrfOf } from '../account/helpers.js';
import { uniqueName } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { enrolledIdentity, signInWithCode } from '../second-factor/helpers.js';
import { PUBLIC_URL, codeOf, linkOf, useVerificationApp } from './helpers.js';

/** Issue 23 item 4: the limits and refusals around an address verification. */
describeEachDatabase('email verification limits', (kind) => {
  const v = useVerificationApp(kind);

  it('limits resends per identity; a resent code replaces the earlier one', async () => {
    const started = await v.startChange();
    // The first send counted one of the five an hour.
    let latest = started.mail;
    for (let i = 0; i < 4; i++) {
      const before = v.smtp.received.length;
      const res = await v.t.inject({
        method: 'POST',
        url: `/v1/verification/${started.id}/resend`,
        payload: { csrf_token: started.csrf },
      });
      expect(res.statusCode, res.body).toBe(200);
      const mails = await v.mailsSince(before);
      expect(mails).toHaveLength(1);
      latest = mails[0]!;
    }
    const refused = await v.t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}/resend`,
      payload: { csrf_token: started.csrf },
    });
    expect(refused.statusCode, refused.body).toBe(429);
    if (codeOf(latest) !== codeOf(started.mail)) {
      const old = await v.submit(started, { code: codeOf(started.mail) });
      expect(old.json().error).toBe('invalid_credentials');
    }
    const res = await v.submit(started, { code: codeOf(latest) });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('refuses an address another identity holds (409 email_taken), now and at verification', async () => {
    const started = await v.startChange();
    const other = await addUser(v.t);
    const taken = await v.t.call('PUT', `/v1/identities/${other.id}/email`, v.writer, {
      email: `${uniqueName('taken')}@example.com`,
    });
    expect(taken.statusCode).toBe(200);
    const res = await asUser(v.t, started.session, {
      method: 'POST',
      url: '/v1/account/email',
      csrf: await csrfOf(v.t, started.session),
      payload: { email: taken.json().email },
    });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error).toBe('email_taken');

    // The pending address is taken meanwhile: the code stays unused, the change refused.
    const grab = await v.t.call('PUT', `/v1/identities/${other.id}/email`, v.writer, {
      email: started.newAddress,
    });
    expect(grab.statusCode, grab.body).toBe(200);
    const late = await v.submit(started, { code: codeOf(started.mail) });
    expect(late.statusCode, late.body).toBe(409);
    expect((await v.emailOf(started.identityId)).email).toBe(started.oldAddress);
  });

  it('refuses an aal1 session of an identity with TOTP (step-up); its aal2 sign-in may', async () => {
    const enrolled = await enrolledIdentity(v.t, uniqueName('totp'));
    const change = async (token: string) => {
      const session = { cookie: `service_session=${token}` };
      return asUser(v.t, session, {
        method: 'POST',
        url: '/v1/account/email',
        csrf: await csrfOf(v.t, { ...session, token, id: '' }),
        payload: { email: `${enrolled.username}@example.com` },
      });
    };
    const weak = await change(enrolled.session);
    expect(weak.statusCode, weak.body).toBe(403);
    expect(weak.json().error).toBe('forbidden');
    const strong = await change(await signInWithCode(v.t, enrolled.username, enrolled.secret));
    expect(strong.statusCode, strong.body).toBe(202);
  });

  it('mails a backend-set address a code when asked (send_verification), and only then', async () => {
    const user = await addUser(v.t);
    await v.worker.drain();
    const before = v.smtp.received.length;
    const silent = await v.t.call('PUT', `/v1/identities/${user.id}/email`, v.writer, {
      email: `${user.username}@quiet.example.com`,
    });
    expect(silent.statusCode, silent.body).toBe(200);
    expect(await v.mailsSince(before)).toHaveLength(0);

    const address = `${user.username}@backend.example.com`;
    const set = await v.t.call('PUT', `/v1/identities/${user.id}/email`, v.writer, {
      email: address,
      send_verification: true,
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ email: address, email_verified: false });
    const [mail] = await v.mailsSince(before);
    expect(mail!.to).toMatchObject({ text: address });
    const link = new URL(linkOf(mail!));
    expect(link.origin).toBe(PUBLIC_URL);
    const id = link.searchParams.get('id')!;
    const flow = await v.t.inject({ method: 'GET', url: `/v1/verification?id=${id}` });
    const done = await v.submit({ id, csrf: flow.json().csrf_token }, { code: codeOf(mail!) });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().identity).toMatchObject({ email: address, email_verified: true });
    // The same address: nobody to tell.
    expect(await v.mailsSince(v.smtp.received.length)).toHaveLength(0);

    const refused = await v.t.call('PUT', `/v1/identities/${user.id}/email`, v.writer, {
      email: address,
      verified: true,
      send_verification: true,
    });
    expect(refused.statusCode).toBe(422);
  });

  it('refuses a submission without the flow token or from another site; a newer request supersedes', async () => {
    const started = await v.startChange();
    const code = codeOf(started.mail);
    const noToken = await v.t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}`,
      payload: { code },
    });
    expect(noToken.statusCode, noToken.body).toBe(401);
    expect(noToken.json().error).toBe('invalid_token');
    const foreign = await v.t.inject({
      method: 'POST',
      url: `/v1/verification/${started.id}`,
      headers: { origin: 'https://evil.example' },
      payload: { csrf_token: started.csrf, code },
    });
    expect(foreign.statusCode, foreign.body).toBe(403);

    // A second request: only the newest address can be verified.
    const again = await asUser(v.t, started.session, {
      method: 'POST',
      url: '/v1/account/email',
      csrf: await csrfOf(v.t, started.session),
      payload: { email: `${started.username}@newer.example.com` },
    });
    expect(again.statusCode, again.body).toBe(202);
    const superseded = await v.submit(started, { code });
    expect(superseded.json().error).toBe('invalid_token');
    const flow = await v.t.inject({ method: 'GET', url: `/v1/verification?id=${started.id}` });
    expect(flow.json().state).toBe('superseded');
    expect((await v.emailOf(started.identityId)).email).toBe(started.oldAddress);
  });

  it('answers a refused account form with a page that says why', async () => {
    const started = await v.startChange();
    const other = await addUser(v.t);
    const taken = `${uniqueName('held')}@example.com`;
    await v.t.call('PUT', `/v1/identities/${other.id}/email`, v.writer, { email: taken });
    const res = await asUser(v.t, started.session, {
      method: 'POST',
      url: '/v1/account/email',
      headers: { 'content-type': FORM, accept: BROWSER_ACCEPT },
      payload: new URLSearchParams({
        email: taken,
        csrf_token: await csrfOf(v.t, started.session),
      }).toString(),
    });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('This address belongs to another account.');
  });
});
