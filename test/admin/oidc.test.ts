import { afterEach, beforeEach, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { auditRows, csrfOf, getPage, operatorAtAal2, postForm } from './helpers.js';

/** The console's OpenID Connect page (docs/admin.md): clients and signing keys. */
describeEachDatabase('admin console: OIDC clients and keys', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it('registers a client (secret shown once), revokes it, rotates the key; each audited with the operator', async () => {
    const { session, identity: root } = await operatorAtAal2(t);
    const page = await getPage(t, session, '/v1/admin/oidc');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="provider-off"');
    const csrf = csrfOf(page);

    const created = await postForm(t, session, '/v1/admin/oidc/clients', {
      csrf_token: csrf,
      name: 'Reports <app>',
      redirect_uris: 'https://app.example/callback\r\n\r\nhttps://app.example/other\r\n',
      first_party: 'true',
    });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const clientId = /id="created-client-id">([^<]+)</.exec(created.body)![1]!;
    const secret = /id="created-secret">([^<]+)</.exec(created.body)![1]!;
    expect(secret.length).toBeGreaterThan(20);
    expect(created.body).toContain('Reports &lt;app&gt;');
    const [client] = await t.deps.store.listOidcClients();
    expect(client).toMatchObject({ id: clientId, first_party: 1 });
    expect(JSON.parse(client!.redirect_uris)).toEqual([
      'https://app.example/callback',
      'https://app.example/other',
    ]);
    const listed = await getPage(t, session, '/v1/admin/oidc');
    expect(listed.body).not.toContain(secret);

    const revoked = await postForm(t, session, `/v1/admin/oidc/clients/${clientId}/revoke`, {
      csrf_token: csrf,
    });
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe('/v1/admin/oidc?done=revoked');
    expect((await t.deps.store.findOidcClient(clientId))?.revoked_at).not.toBeNull();

    const rotated = await postForm(t, session, '/v1/admin/oidc/keys/rotate', { csrf_token: csrf });
    expect(rotated.statusCode).toBe(303);
    const after = await getPage(t, session, '/v1/admin/oidc?done=rotated');
    expect(after.body).toMatch(/<td>active<\/td>/);

    for (const action of ['oidc_client_create', 'oidc_client_revoke', 'oidc_key_rotate']) {
      const rows = await auditRows(t, action);
      expect(rows, action).toHaveLength(1);
      expect(rows[0]).toMatchObject({ service_name: 'admin', service_id: root.id });
    }
  });

  it('keeps the form after a refused redirect URI; refuses an unknown client and a stale sign-in', async () => {
    const { session } = await operatorAtAal2(t);
    const csrf = csrfOf(await getPage(t, session, '/v1/admin/oidc'));
    const bad = await postForm(t, session, '/v1/admin/oidc/clients', {
      csrf_token: csrf,
      name: 'app',
      redirect_uris: 'not a uri',
      public: 'true',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('role="alert"');
    expect(bad.body).toContain('>not a uri</textarea>');
    expect(bad.body).toContain('name="public" value="true" checked');
    const unknown = await postForm(t, session, `/v1/admin/oidc/clients/${newId()}/revoke`, {
      csrf_token: csrf,
    });
    expect(unknown.statusCode).toBe(404);
    t.clock.advance(t.deps.config.privilegedWindowMs + 1000);
    const stale = await postForm(t, session, '/v1/admin/oidc/keys/rotate', { csrf_token: csrf });
    expect(stale.statusCode).toBe(403);
    expect(await t.deps.store.listSigningKeys()).toEqual([]);
    expect(await t.deps.store.listOidcClients()).toEqual([]);
  });
});
