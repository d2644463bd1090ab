import { describe, expect, it } from 'vitest';
import {
  NEW_PASSWORD,
  PASSWORD,
  browserSignIn,
  passwordWorks,
  whoamiStatus,
} from '../account/helpers.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { STEP_MS, enrolTotp, totpCode } from '../second-factor/helpers.js';
import { type RecoveryFlow, codeOf, linkOf, useRecoveryApp } from './helpers.js';

/** The flow's answer with what differs between any two flows (ids, token, times) masked. */
function shape(body: Record<string, unknown>) {
  return { ...body, id: 'x', flow_id: 'x', csrf_token: 'x', expires_at: 'x', address: 'x' };
}

describeEachDatabase('account recovery by mail (API)', (kind) => {
  const h = useRecoveryApp(kind);

  async function mailFor(email: string): Promise<{ flow: RecoveryFlow; code: string; link: URL }> {
    const flow = await h.start();
    await h.worker.drain();
    const before = h.smtp.received.length;
    const res = await h.post(flow, '/email', { email: email.toUpperCase() });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ state: 'sent', address: email });
    const mails = await h.mailsSince(before);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toMatchObject({ text: email });
    return { flow, code: codeOf(mails[0]!), link: linkOf(mails[0]!) };
  }

  it('a mailed code sets a new password, ends every other session and signs in', async () => {
    const user = await h.user();
    const old = await browserSignIn(h.t, user.username);
    const { flow, code, link } = await mailFor(user.email);
    expect(link.searchParams.get('flow')).toBe(flow.id);

    const checked = await h.post(flow, '/code', { code });
    expect(checked.statusCode, checked.body).toBe(200);
    expect(checked.json().second_factor).toEqual({ methods: [] });

    const weak = await h.post(flow, '', { code, password: 'short' });
    expect(weak.statusCode, weak.body).toBe(422);

    const before = h.smtp.received.length;
    const done = await h.post(flow, '', { code, password: NEW_PASSWORD });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().session).toMatchObject({ authenticated_via: 'recovery', aal: 'aal1' });
    const cookie = done.cookies.find((c) => c.name === 'service_session')!;
    expect(await whoamiStatus(h.t, { cookie: `service_session=${cookie.value}` } as never)).toBe(
      200,
    );
    expect(await whoamiStatus(h.t, old)).toBe(401);
    const svc = await h.t.token('direct_auth');
    expect(await passwordWorks(h.t, svc, user.username, NEW_PASSWORD)).toBe(true);
    expect(await passwordWorks(h.t, svc, user.username, PASSWORD)).toBe(false);
    // The password change's notice follows, as for any password change.
    const notices = await h.mailsSince(before);
    expect(notices.map((mail) => mail.subject)).toContain('Your password was changed');

    const again = await h.post(flow, '', { code, password: NEW_PASSWORD });
    expect(again.statusCode).toBe(401);
    expect(again.json()).toEqual({ error: 'invalid_token' });
    const audit = await h.t.deps.store.listAuditRecords(50);
    const actions = audit.filter((row) => row.target_identity === user.id).map((row) => row.action);
    expect(actions).toEqual(
      expect.arrayContaining(['recovery_requested', 'identity_set_password', 'login']),
    );
  });

  it('the link’s token works in place of the code', async () => {
    const user = await h.user();
    const { flow, link } = await mailFor(user.email);
    const token = link.searchParams.get('token')!;
    const done = await h.post(flow, '', { token, password: NEW_PASSWORD });
    expect(done.statusCode, done.body).toBe(200);
  });

  it('known, unknown and unverified addresses answer alike, and only the verified one is mailed', async () => {
    const known = await h.user(true);
    const unverified = await h.user(false);
    const before = h.smtp.received.length;
    const answers = [];
    for (const email of [known.email, 'nobody-at-all@example.com', unverified.email]) {
      const flow = await h.start();
      const res = await h.post(flow, '/email', { email });
      const wrong = await h.post(flow, '/code', { code: '000000' });
      answers.push({
        status: res.statusCode,
        body: shape(res.json()),
        headers: Object.keys(res.headers).sort(),
        wrong: [wrong.statusCode, wrong.json()],
      });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect(answers[0]!.wrong).toEqual([401, { error: 'invalid_credentials' }]);
    const mails = await h.mailsSince(before);
    expect(mails.map((mail) => (mail.to as { text: string }).text)).toEqual([known.email]);
  });

  it('wrong codes close the flow at the cap, known address or not', async () => {
    const known = await h.user();
    for (const email of [known.email, 'nobody-either@example.com']) {
      const flow = await h.start();
      await h.post(flow, '/email', { email });
      const statuses = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await h.post(flow, '/code', { code: '000001' })).statusCode);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
      const view = await h.t.inject({ method: 'GET', url: `/v1/recovery?flow=${flow.id}` });
      expect(view.json().state).toBe('failed');
    }
  });

  it('a user with TOTP recovers only with a TOTP code or a recovery code', async () => {
    const user = await h.user();
    const session = await browserSignIn(h.t, user.username);
    const { secret, recoveryCodes } = await enrolTotp(h.t, session.token);
    const { flow, code } = await mailFor(user.email);
    const checked = await h.post(flow, '/code', { code });
    expect(checked.json().second_factor).toEqual({ methods: ['totp', 'recovery_code'] });

    const mailOnly = await h.post(flow, '', { code, password: NEW_PASSWORD });
    expect(mailOnly.statusCode, mailOnly.body).toBe(403);
    expect(mailOnly.json().error).toBe('forbidden');
    const wrong = await h.post(flow, '', { code, password: NEW_PASSWORD, totp_code: '000000' });
    expect(wrong.statusCode).toBe(401);
    const svc = await h.t.token('direct_auth');
    expect(await passwordWorks(h.t, svc, user.username, NEW_PASSWORD)).toBe(false);

    h.t.clock.advance(STEP_MS);
    const totp = await totpCode(secret, h.t.clock.now());
    const done = await h.post(flow, '', { code, password: NEW_PASSWORD, totp_code: totp });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().session).toMatchObject({ authenticated_via: 'recovery', aal: 'aal2' });

    // And again, with a recovery code instead of the app.
    const second = await mailFor(user.email);
    const byCode = await h.post(second.flow, '', {
      code: second.code,
      password: `${NEW_PASSWORD} again`,
      recovery_code: recoveryCodes[0]!,
    });
    expect(byCode.statusCode, byCode.body).toBe(200);
    expect(byCode.json().session.aal).toBe('aal2');
  });

  it('racing submissions of one code: exactly one sets the password', async () => {
    const user = await h.user();
    const { flow, code } = await mailFor(user.email);
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        h.post(flow, '', { code, password: `${NEW_PASSWORD} ${i}` }),
      ),
    );
    const statuses = results.map((res) => res.statusCode).sort();
    expect(statuses).toEqual([200, 401, 401, 401]);
  });

  it('a newer mail supersedes the earlier code', async () => {
    const user = await h.user();
    const first = await mailFor(user.email);
    await mailFor(user.email);
    const res = await h.post(first.flow, '', { code: first.code, password: NEW_PASSWORD });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'invalid_token' });
  });
});

describe('recovery flow input', () => {
  const h = useRecoveryApp('sqlite');
  it('refuses a missing CSRF token, a bad address and a foreign return_to with the error model', async () => {
    const flow = await h.start();
    const noCsrf = await h.t.inject({
      method: 'POST',
      url: `/v1/recovery/${flow.id}/email`,
      payload: { email: 'a@example.com' },
    });
    expect(noCsrf.json()).toEqual({ error: 'invalid_token' });
    const bad = await h.post(flow, '/email', { email: 'not an address' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error).toBe('validation_error');
    const foreign = await h.t.inject({
      method: 'GET',
      url: '/v1/recovery?return_to=https://evil.example/',
    });
    expect(foreign.statusCode).toBe(422);
    const unknown = await h.t.inject({ method: 'GET', url: '/v1/recovery?flow=rf_nothing' });
    expect(unknown.statusCode).toBe(404);
  });
});
