import { afterEach, beforeEach, expect, it } from 'vitest';
import { grantOperator, revokeOperator } from '../../src/domain/admin/operators.js';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { PASSWORD, addIdentity } from '../flows/helpers.js';
import { enrolledIdentity, signedIn } from '../second-factor/helpers.js';
import { CLI_ACTOR, auditRows, csrfOf, getPage, operatorAtAal2, postForm } from './helpers.js';

const HOSTILE_NAME = '<img src=x onerror=alert(1)><script>alert("pwned")</script>&amp;';

/** Issue 25, step 1: who may see the console, and its CSRF and recent sign-in checks. */
describeEachDatabase('admin console: who may operate', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it('sends a signed-out browser to the login, coming back to the page it asked for', async () => {
    for (const url of ['/v1/admin', '/v1/admin/audit?action=sweep']) {
      const res = await getPage(t, null, url);
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe(
        `/v1/login?return_to=${encodeURIComponent(`http://localhost${url}`)}`,
      );
    }
  });

  it('refuses a signed-in non-operator with 403, even at aal2, showing nothing of the console', async () => {
    await addIdentity(t, 'bob');
    const bob = await signedIn(t, 'bob');
    const carol = await enrolledIdentity(t, 'carol');
    for (const session of [bob, carol.session]) {
      for (const url of [
        '/v1/admin',
        '/v1/admin/identities',
        '/v1/admin/audit',
        '/v1/admin/audit.csv',
        '/v1/admin/service-tokens',
        '/v1/admin/oidc',
      ]) {
        const res = await getPage(t, session, url);
        expect(res.statusCode, url).toBe(403);
        expect(res.headers['content-type']).toContain('text/html');
        expect(res.body).toContain('Not an operator');
        expect(res.body).not.toContain('Identities');
      }
    }
  });

  it('tells an operator without a second factor to enrol one', async () => {
    await addIdentity(t, 'root');
    await grantOperator(t.deps, CLI_ACTOR, 'root');
    const res = await getPage(t, await signedIn(t, 'root'), '/v1/admin');
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Second factor needed');
    expect(res.body).toContain('href="/v1/account/passkeys"');
    expect(res.body).toContain('href="/v1/account/two-factor"');
  });

  it('asks an operator at aal1 to sign in again with the second factor', async () => {
    const { aal1, session } = await operatorAtAal2(t);
    const refused = await getPage(t, aal1, '/v1/admin/identities');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Sign in with your second factor');
    expect(refused.body).toContain(
      `href="/v1/login?return_to=${encodeURIComponent('http://localhost/v1/admin/identities')}"`,
    );
    const page = await getPage(t, session, '/v1/admin/identities');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(
      /^default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('refuses a form without its CSRF token, with another token or from another origin; changes nothing', async () => {
    const { session, aal1 } = await operatorAtAal2(t);
    const bob = await addIdentity(t, 'bob');
    const url = `/v1/admin/identities/${bob.id}/disable`;
    const page = await getPage(t, session, `/v1/admin/identities/${bob.id}`);
    const csrf = csrfOf(page);
    const aal1Token = t.deps.secretBox.mac('admin-csrf', 'another-session');
    const attempts = [
      postForm(t, session, url, {}),
      postForm(t, session, url, { csrf_token: 'forged' }),
      postForm(t, session, url, { csrf_token: aal1Token }),
      postForm(t, session, url, { csrf_token: csrf }, { origin: 'https://evil.example' }),
      // The token of a page of another session of the same operator.
      postForm(t, aal1, url, { csrf_token: csrf }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toContain('text/html');
    }
    expect((await t.deps.store.findIdentityById(bob.id))?.state).toBe('active');
    expect(await auditRows(t, 'identity_disable')).toEqual([]);
  });

  it('needs a recent sign-in for destructive actions, not for enable', async () => {
    const { session } = await operatorAtAal2(t);
    const bob = await addIdentity(t, 'bob');
    const csrf = csrfOf(await getPage(t, session, `/v1/admin/identities/${bob.id}`));
    t.clock.advance(t.deps.config.privilegedWindowMs + 1000);
    const refused = await postForm(t, session, `/v1/admin/identities/${bob.id}/disable`, {
      csrf_token: csrf,
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Sign in again');
    expect(refused.body).toContain('id="sign-in-again"');
    expect((await t.deps.store.findIdentityById(bob.id))?.state).toBe('active');

    await t.deps.store.setIdentityState(bob.id, 'disabled', t.clock.now());
    const enabled = await postForm(t, session, `/v1/admin/identities/${bob.id}/enable`, {
      csrf_token: csrf,
    });
    expect(enabled.statusCode).toBe(303);
    expect((await t.deps.store.findIdentityById(bob.id))?.state).toBe('active');
  });

  it('stops at the next request once the role is revoked', async () => {
    const { session } = await operatorAtAal2(t);
    expect((await getPage(t, session, '/v1/admin')).statusCode).toBe(200);
    await revokeOperator(t.deps, CLI_ACTOR, 'root');
    expect((await getPage(t, session, '/v1/admin')).statusCode).toBe(403);
  });
});

describeEachDatabase('admin console: identities and audit', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it('searches by username, email or id, filters by state, pages by 50', async () => {
    const { session } = await operatorAtAal2(t);
    for (let i = 0; i < 55; i += 1) {
      t.clock.advance(1000);
      const now = t.clock.now();
      await t.deps.store.insertIdentity({
        id: newId(),
        username: `user_${String(i).padStart(2, '0')}`,
        display_name: `User ${i}`,
        avatar_url: null,
        state: i % 2 === 0 ? 'active' : 'disabled',
        password_hash: null,
        email: i === 7 ? 'seven@mail.example' : null,
        email_verified_at: null,
        created_at: now,
        updated_at: now,
      });
    }
    const first = await getPage(t, session, '/v1/admin/identities?q=USER_&state=');
    expect(first.statusCode).toBe(200);
    expect(first.body.match(/<tr>\n<td><a href/g)).toHaveLength(50);
    expect(first.body).toContain('user_54');
    expect(first.body).toContain('href="/v1/admin/identities?q=USER_&amp;page=2" rel="next"');
    const second = await getPage(t, session, '/v1/admin/identities?q=USER_&page=2');
    expect(second.body.match(/<tr>\n<td><a href/g)).toHaveLength(5);
    expect(second.body).not.toContain('rel="next"');

    // `_` is a literal, not LIKE's any-character: user_0x only.
    const literal = await getPage(t, session, '/v1/admin/identities?q=r_0');
    expect(literal.body.match(/<tr>\n<td><a href/g)).toHaveLength(10);
    const disabled = await getPage(t, session, '/v1/admin/identities?state=disabled');
    expect(disabled.body.match(/<tr>\n<td><a href/g)).toHaveLength(27);

    const byEmail = await getPage(t, session, '/v1/admin/identities?q=SEVEN%40mail');
    expect(byEmail.body.match(/<tr>\n<td><a href/g)).toHaveLength(1);
    expect(byEmail.body).toContain('user_07');

    const root = (await t.deps.store.findIdentityByUsername('root'))!;
    const byId = await getPage(t, session, `/v1/admin/identities?q=${root.id}`);
    expect(byId.body.match(/<tr>\n<td><a href/g)).toHaveLength(1);

    const bad = await getPage(t, session, '/v1/admin/identities?state=gone&page=0');
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('role="alert"');
  });

  it('renders markup in display names as text, on every page that shows it', async () => {
    const { session } = await operatorAtAal2(t);
    const hostile = await registerIdentity(t.deps, CLI_ACTOR, {
      username: 'mallory',
      password: PASSWORD,
      display_name: HOSTILE_NAME,
    });
    for (const url of ['/v1/admin/identities', `/v1/admin/identities/${hostile.id}`]) {
      const res = await getPage(t, session, url);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('<script>alert');
      expect(res.body).not.toContain('<img src=x');
      expect(res.body).toContain('&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;&amp;amp;');
    }
  });

  it('each action calls the domain service and is audited with the operator as the actor', async () => {
    const { session, identity: root } = await operatorAtAal2(t);
    const bob = await enrolledIdentity(t, 'bob');
    const page = await getPage(t, session, `/v1/admin/identities/${bob.identity.id}`);
    expect(page.body).toContain('Authenticator app (TOTP) since');
    const csrf = csrfOf(page);
    const post = (action: string, fields: Record<string, string> = {}) =>
      postForm(t, session, `/v1/admin/identities/${bob.identity.id}/${action}`, {
        csrf_token: csrf,
        ...fields,
      });

    const steps: [string, Record<string, string>, string, string][] = [
      ['end-sessions', {}, 'sessions-ended', 'identity_revoke_sessions'],
      ['reset-passkeys', {}, 'passkeys-reset', 'passkeys_reset'],
      ['reset-second-factor', {}, 'second-factor-reset', 'identity_second_factor_reset'],
      ['disable', { end_sessions: 'true' }, 'disabled', 'identity_disable'],
      ['enable', {}, 'enabled', 'identity_enable'],
    ];
    for (const [action, fields, done, audited] of steps) {
      const res = await post(action, fields);
      expect(res.statusCode, `${action}: ${res.body}`).toBe(303);
      expect(res.headers.location).toBe(`/v1/admin/identities/${bob.identity.id}?done=${done}`);
      const rows = await auditRows(t, audited);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        service_name: 'admin',
        service_id: root.id,
        target_identity: bob.identity.id,
        outcome: 'ok',
      });
      expect(JSON.parse(rows[0]!.details)).toMatchObject({ via: 'admin', operator: 'root' });
    }
    expect((await t.deps.store.findTotpFactor(bob.identity.id)) ?? null).toBeNull();
    expect(await t.deps.store.listLiveSessions(bob.identity.id, t.clock.now())).toEqual([]);
    const after = await getPage(t, session, `/v1/admin/identities/${bob.identity.id}?done=enabled`);
    expect(after.body).toContain('The identity was enabled.');
    expect(after.body).toContain('No authenticator app.');

    // An id that names nobody, or a username in its place: 404, nothing done.
    for (const id of [newId(), 'bob']) {
      const res = await postForm(t, session, `/v1/admin/identities/${id}/disable`, {
        csrf_token: csrf,
      });
      expect(res.statusCode).toBe(404);
    }
    expect(await auditRows(t, 'identity_disable')).toHaveLength(1);
  });

  it('filters the audit log by action, actor, identity, outcome and time', async () => {
    const { session, identity: root } = await operatorAtAal2(t);
    const bob = await addIdentity(t, 'bob');
    t.clock.advance(1000);
    const start = new Date(t.clock.now()).toISOString();
    await t.deps.store.insertAuditRecords([
      {
        id: newId(),
        at: t.clock.now(),
        action: 'sign_in',
        service_name: 'browser',
        service_id: null,
        target_identity: bob.id,
        outcome: 'invalid_credentials',
        details: '{"marker":"failed-bob"}',
      },
    ]);
    const csrf = csrfOf(await getPage(t, session, `/v1/admin/identities/${bob.id}`));
    await postForm(t, session, `/v1/admin/identities/${bob.id}/end-sessions`, { csrf_token: csrf });

    const count = async (query: string) => {
      const res = await getPage(t, session, `/v1/admin/audit?${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return (res.body.match(/<tr>\n<td><time/g) ?? []).length;
    };
    expect(await count('action=sign_in')).toBe(1);
    expect(await count('outcome=invalid_credentials')).toBe(1);
    expect(await count(`actor=${root.id}`)).toBe(1);
    expect(await count('actor=admin&action=identity_revoke_sessions')).toBe(1);
    // identity_register, sign_in, identity_revoke_sessions.
    expect(await count('identity=bob')).toBe(3);
    expect(await count(`identity=${bob.id}&outcome=ok`)).toBe(2);
    expect(await count(`since=${encodeURIComponent(start)}&identity=bob`)).toBe(2);
    expect(await count(`until=${encodeURIComponent(start)}&identity=bob`)).toBe(1);

    const unknown = await getPage(t, session, '/v1/admin/audit?identity=nobody');
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toContain('No identity has that id or username.');
    const badTime = await getPage(t, session, '/v1/admin/audit?since=yesterday');
    expect(badTime.statusCode).toBe(422);
    expect(badTime.body).toContain('Since must be an ISO 8601 date');
  });

  it('exports CSV with formula-looking cells made text, and audits the export', async () => {
    const { session, identity: root } = await operatorAtAal2(t);
    await t.deps.store.insertAuditRecords(
      ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2', '@SUM(A1)'].map((name, i) => ({
        id: newId(),
        at: t.clock.now() + i,
        action: 'svc_create',
        service_name: name,
        service_id: null,
        target_identity: null,
        outcome: 'ok',
        details: '{}',
      })),
    );
    const res = await getPage(t, session, '/v1/admin/audit.csv?action=svc_create');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="tessera-audit-/);
    const lines = res.body.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'timestamp,action,service_name,service_id,target_identity,outcome,details',
    );
    expect(lines.slice(1).map((line) => line.split(',')[2])).toEqual([
      "'@SUM(A1)",
      "'-2",
      "'+1+1",
      `"'=HYPERLINK(""http://evil.example""`,
    ]);
    const exports = await auditRows(t, 'admin_audit_export');
    expect(exports).toHaveLength(1);
    expect(exports[0]).toMatchObject({ service_name: 'admin', service_id: root.id });
    expect(JSON.parse(exports[0]!.details)).toMatchObject({
      rows: 4,
      filters: { action: 'svc_create' },
    });
  });
});
