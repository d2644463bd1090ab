import { afterEach, beforeEach, expect, it } from 'vitest';
import { setIdentityEmail } from '../../src/domain/identities/identity-email.js';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { PASSWORD, operator } from '../flows/helpers.js';
import { CLI_ACTOR, auditRows, csrfOf, getPage, operatorAtAal2, postForm } from './helpers.js';

const BUTTON = 'Mark the email address verified';

/** Issue 25: an operator who checked an address out of band marks it verified. */
describeEachDatabase('admin console: mark an email address verified', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  async function bobWith(email: string | null) {
    return registerIdentity(t.deps, CLI_ACTOR, {
      username: 'bob',
      password: PASSWORD,
      ...(email === null ? {} : { email }),
    });
  }

  it('marks the address the page showed verified, audited with the operator as the actor', async () => {
    const { session, identity: root } = await operatorAtAal2(t);
    const bob = await bobWith('Bob@Example.com');
    const page = await getPage(t, session, `/v1/admin/identities/${bob.id}`);
    expect(page.body).toContain('bob@example.com (not verified)');
    expect(page.body).toContain(BUTTON);

    const res = await postForm(t, session, `/v1/admin/identities/${bob.id}/verify-email`, {
      csrf_token: csrfOf(page),
      email: 'bob@example.com',
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/v1/admin/identities/${bob.id}?done=email-verified`);
    const stored = (await t.deps.store.findIdentityById(bob.id))!;
    expect(stored.email).toBe('bob@example.com');
    expect(stored.email_verified_at).toBe(t.clock.now());
    const rows = await auditRows(t, 'identity_set_email');
    expect(rows.at(-1)).toMatchObject({
      service_name: 'admin',
      service_id: root.id,
      target_identity: bob.id,
      outcome: 'ok',
    });
    expect(JSON.parse(rows.at(-1)!.details)).toEqual(
      expect.objectContaining({ via: 'admin', email: 'same', verified: true }),
    );
    const after = await getPage(t, session, res.headers.location as string);
    expect(after.body).toContain('Its email address is now verified.');
    expect(after.body).toContain('bob@example.com (verified)');
    expect(after.body).not.toContain(BUTTON);
  });

  it('offers nothing without an address; refuses a stale address, a missing CSRF token and an old sign-in', async () => {
    const { session } = await operatorAtAal2(t);
    const bob = await bobWith(null);
    const page = await getPage(t, session, `/v1/admin/identities/${bob.id}`);
    expect(page.body).not.toContain(BUTTON);
    const csrf = csrfOf(page);
    const url = `/v1/admin/identities/${bob.id}/verify-email`;
    const none = await postForm(t, session, url, { csrf_token: csrf, email: 'bob@example.com' });
    expect(none.statusCode).toBe(422);
    expect((await t.deps.store.findIdentityById(bob.id))!.email).toBeNull();

    // The address changed after the operator looked: the one they saw is not verified.
    await setIdentityEmail(t.deps, operator, bob.id, { email: 'new@example.com' });
    const stale = await postForm(t, session, url, { csrf_token: csrf, email: 'bob@example.com' });
    expect(stale.statusCode).toBe(422);
    expect(stale.body).toContain('changed meanwhile');

    const noCsrf = await postForm(t, session, url, { email: 'new@example.com' });
    expect(noCsrf.statusCode).toBe(403);

    t.clock.advance(t.deps.config.privilegedWindowMs + 1000);
    const old = await postForm(t, session, url, { csrf_token: csrf, email: 'new@example.com' });
    expect(old.statusCode).toBe(403);
    expect(old.body).toContain('Sign in again');
    expect((await t.deps.store.findIdentityById(bob.id))!.email_verified_at).toBeNull();
  });
});
