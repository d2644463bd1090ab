import { afterEach, beforeEach, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { auditRows, csrfOf, getPage, operatorAtAal2, postForm } from './helpers.js';

const TOKEN = /<code class="key" id="created-token">([^<]+)<\/code>/;

/** The console's service tokens page (docs/admin.md): created shown once, revoked at once. */
describeEachDatabase('admin console: service tokens', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it('creates a token with grants, shown once, that works; revokes it; both audited with the operator', async () => {
    const { session, identity: root } = await operatorAtAal2(t);
    const csrf = csrfOf(await getPage(t, session, '/v1/admin/service-tokens'));
    const body = new URLSearchParams({ csrf_token: csrf, name: 'backend' });
    body.append('grants', 'identity_read');
    body.append('grants', 'revoke');
    const created = await t.inject({
      method: 'POST',
      url: '/v1/admin/service-tokens',
      headers: {
        cookie: `service_session=${session}`,
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'http://localhost',
      },
      payload: body.toString(),
    });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const token = TOKEN.exec(created.body)![1]!;
    expect((await t.call('GET', '/v1/identities?username=root', token)).statusCode).toBe(200);

    const listed = await getPage(t, session, '/v1/admin/service-tokens');
    expect(listed.body).toContain('identity_read revoke');
    expect(listed.body).not.toContain(token);
    const [row] = await auditRows(t, 'svc_create');
    expect(row).toMatchObject({ service_name: 'admin', service_id: root.id });

    const id = (await t.deps.store.findServiceTokenByIdOrName('backend'))!.id;
    const revoked = await postForm(t, session, `/v1/admin/service-tokens/${id}/revoke`, {
      csrf_token: csrf,
    });
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe('/v1/admin/service-tokens?done=revoked');
    expect((await t.call('GET', '/v1/identities?username=root', token)).statusCode).toBe(401);
    const [revokeRow] = await auditRows(t, 'svc_revoke');
    expect(revokeRow).toMatchObject({ service_name: 'admin', service_id: root.id });
  });

  it('keeps the form after a refused name or grant; refuses without CSRF, without a recent sign-in, or an unknown id', async () => {
    const { session } = await operatorAtAal2(t);
    const csrf = csrfOf(await getPage(t, session, '/v1/admin/service-tokens'));
    const bad = await postForm(t, session, '/v1/admin/service-tokens', {
      csrf_token: csrf,
      name: '<b>bad name</b>',
      grants: 'introspect',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('Name must be 1-64 characters');
    expect(bad.body).toContain('value="&lt;b&gt;bad name&lt;/b&gt;"');
    expect(bad.body).toContain('value="introspect" checked');
    const noGrant = await postForm(t, session, '/v1/admin/service-tokens', {
      csrf_token: csrf,
      name: 'ok',
    });
    expect(noGrant.statusCode).toBe(422);

    const forged = await postForm(t, session, '/v1/admin/service-tokens', {
      name: 'x',
      grants: 'introspect',
    });
    expect(forged.statusCode).toBe(403);
    const unknown = await postForm(t, session, `/v1/admin/service-tokens/${newId()}/revoke`, {
      csrf_token: csrf,
    });
    expect(unknown.statusCode).toBe(404);

    t.clock.advance(t.deps.config.privilegedWindowMs + 1000);
    const stale = await postForm(t, session, '/v1/admin/service-tokens', {
      csrf_token: csrf,
      name: 'late',
      grants: 'introspect',
    });
    expect(stale.statusCode).toBe(403);
    expect(stale.body).toContain('Sign in again');
    expect(await t.deps.store.listServiceTokens()).toEqual([]);
  });
});
