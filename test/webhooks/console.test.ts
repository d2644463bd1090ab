import { afterEach, beforeEach, expect, it } from 'vitest';
import { csrfOf, getPage, operatorAtAal2, postForm } from '../admin/helpers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { addIdentity } from '../flows/helpers.js';
import { signedIn } from '../second-factor/helpers.js';

describeEachDatabase('the console’s Webhooks page', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it('refuses a non-operator (403), showing nothing', async () => {
    await addIdentity(t, 'bob');
    const res = await getPage(t, await signedIn(t, 'bob'), '/v1/admin/webhooks');
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Not an operator');
    expect(res.body).not.toContain('Delivery log');
  });

  it('refuses a private URL with the form again (422), a post without CSRF, and creates nothing', async () => {
    const root = await operatorAtAal2(t);
    const csrf = csrfOf(await getPage(t, root.session, '/v1/admin/webhooks'));
    const url = 'http://169.254.169.254/latest/meta-data';
    const refused = await postForm(t, root.session, '/v1/admin/webhooks', {
      csrf_token: csrf,
      url,
      events: 'identity.created',
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('SERVICE_WEBHOOK_ALLOW_PRIVATE=on');
    expect(refused.body).toContain(`value="${url}"`);

    const forged = await postForm(t, root.session, '/v1/admin/webhooks', {
      url: 'https://93.184.215.14/',
      events: 'identity.created',
    });
    expect(forged.statusCode).toBe(403);
    expect(await t.deps.store.listWebhooks()).toEqual([]);

    const created = await postForm(t, root.session, '/v1/admin/webhooks', {
      csrf_token: csrf,
      url: 'https://93.184.215.14/',
      events: 'identity.created',
    });
    expect(created.statusCode).toBe(200);
    expect(created.headers['cache-control']).toContain('no-store');
    expect(created.body).toMatch(/id="created-secret">whsec_/);
  });
});
