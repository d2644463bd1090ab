import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import type { OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { NEW_PASSWORD, addUser } from '../account/helpers.js';
import { auditRows, csrfOf, getPage, operatorAtAal2, postForm } from '../admin/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { courierFor } from '../verification/helpers.js';
import { codeOf, linkOf } from './helpers.js';

const BUTTON = 'Send a recovery mail';

/** Issue 25: the console's "Send a recovery mail", over HTTP as the other console tests. */
describeEachDatabase('admin console: send a recovery mail', (kind) => {
  let t: TestApp;
  let smtp: TestSmtp;
  let worker: OutboxWorker;
  beforeAll(async () => {
    smtp = await startTestSmtp();
  });
  afterAll(() => smtp.stop());
  beforeEach(async () => {
    t = await createTestApp(kind);
    worker = courierFor(t, smtp);
  });
  afterEach(async () => {
    await worker.stop();
    await t.close();
  });

  async function bob(verified: boolean | null) {
    const user = await addUser(t);
    if (verified !== null) {
      const writer = await t.token('identity_write');
      const email = `${user.username}@example.com`;
      await t.call('PUT', `/v1/identities/${user.id}/email`, writer, { email, verified });
    }
    await worker.drain();
    return user;
  }

  it('mails the verified address a code and link that recover the account; audited with the operator', async () => {
    const { session, identity: root } = await operatorAtAal2(t);
    const user = await bob(true);
    const page = await getPage(t, session, `/v1/admin/identities/${user.id}`);
    expect(page.body).toContain(BUTTON);
    const before = smtp.received.length;
    const res = await postForm(t, session, `/v1/admin/identities/${user.id}/send-recovery`, {
      csrf_token: csrfOf(page),
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/v1/admin/identities/${user.id}?done=recovery-sent`);
    const after = await getPage(t, session, res.headers.location as string);
    expect(after.body).toContain('A recovery mail is on its way');

    await worker.drain();
    const mails = smtp.received.slice(before);
    expect(mails.map((mail) => (mail.to as { text: string }).text)).toEqual([
      `${user.username}@example.com`,
    ]);
    const rows = await auditRows(t, 'recovery_mail_sent');
    expect(rows.at(-1)).toMatchObject({
      service_name: 'admin',
      service_id: root.id,
      target_identity: user.id,
      outcome: 'ok',
    });

    // The user follows the mail: the link's flow takes the code.
    const link = linkOf(mails[0]!);
    const flow = await t.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(flow.json()).toMatchObject({ state: 'sent' });
    const done = await t.inject({
      method: 'POST',
      url: `/v1/recovery/${flow.json().id}`,
      payload: {
        csrf_token: flow.json().csrf_token,
        code: codeOf(mails[0]!),
        password: NEW_PASSWORD,
      },
    });
    expect(done.statusCode, done.body).toBe(200);
  });

  it('is refused with a clear message when the identity has no verified address, and needs a recent sign-in', async () => {
    const { session } = await operatorAtAal2(t);
    for (const verified of [null, false]) {
      const user = await bob(verified);
      const page = await getPage(t, session, `/v1/admin/identities/${user.id}`);
      const res = await postForm(t, session, `/v1/admin/identities/${user.id}/send-recovery`, {
        csrf_token: csrfOf(page),
      });
      expect(res.statusCode).toBe(422);
      expect(res.body).toContain('has no verified email address');
    }
    const user = await bob(true);
    const csrf = csrfOf(await getPage(t, session, `/v1/admin/identities/${user.id}`));
    const noCsrf = await postForm(t, session, `/v1/admin/identities/${user.id}/send-recovery`, {});
    expect(noCsrf.statusCode).toBe(403);
    t.clock.advance(t.deps.config.privilegedWindowMs + 1000);
    const stale = await postForm(t, session, `/v1/admin/identities/${user.id}/send-recovery`, {
      csrf_token: csrf,
    });
    expect(stale.statusCode).toBe(403);
    expect(stale.body).toContain('Sign in again');
    await worker.drain();
    expect(await auditRows(t, 'recovery_mail_sent')).toEqual([]);
  });
});
