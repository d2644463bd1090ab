import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newToken } from '../../src/lib/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  auditEntries,
  auditSince,
  createIdentity,
  createSession,
  PASSWORD,
} from '../helpers/core.js';
import { CORE_ENDPOINTS, expectEachOutcomeAudited } from '../helpers/core-endpoints.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import {
  appOnStore,
  type AppsSharingDatabase,
  appsSharingDatabase,
  type StoreApp,
  withFailingAudit,
  withFlakyAuditFlush,
} from '../helpers/store-app.js';

/** API-DECISIONS 3 (Audit): every request presenting a token leaves a row; mutations atomically. */
describeEachDatabase('audit log', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t?.close());

  it.each(CORE_ENDPOINTS)(
    '$name: allowed, forbidden and unauthenticated calls are all recorded',
    async (endpoint) => {
      const rows = await expectEachOutcomeAudited(t, endpoint);
      for (const row of rows) {
        expect(Date.parse(row.timestamp)).toBe(t.clock.now());
      }
    },
  );

  it('a request without an Authorization header presents no token and leaves no row', async () => {
    const before = (await auditEntries(t)).length;
    await t.call('GET', '/v1/identities?username=someone', null);
    await t.call('POST', '/v1/sessions/verify', null, { token: newToken('session') });
    expect(await auditSince(t, before)).toEqual([]);
  });

  it('records target identity and service name on reads', async () => {
    const token = await t.token('identity_read');
    const identity = await createIdentity(t);
    const before = (await auditEntries(t)).length;
    await t.call('GET', `/v1/identities/${identity.id}`, token);
    const [row] = await auditSince(t, before);
    expect(row).toEqual({
      action: 'identity_read',
      service_name: expect.stringMatching(/^svc-\d+$/),
      service_id: expect.any(String),
      target_identity: identity.id,
      timestamp: new Date(t.clock.now()).toISOString(),
      outcome: 'ok',
      details: { method: 'GET', path: '/v1/identities/:id' },
    });
  });

  it('never records a password or a token', async () => {
    const direct = await t.token('direct_auth', 'introspect');
    const identity = await createIdentity(t);
    const session = await createSession(t, identity.id);
    await t.call('POST', '/v1/authenticate/password', direct, {
      username: identity.username,
      password: PASSWORD,
    });
    await t.call('POST', '/v1/authenticate/password', direct, {
      username: identity.username,
      password: 'wrong password!',
    });
    await t.call('POST', '/v1/sessions/verify', direct, { token: session.token });
    await t.call('POST', '/v1/register', direct, { username: 'x', password: 'short' });
    const text = JSON.stringify(await auditEntries(t));
    for (const secret of [PASSWORD, 'wrong password!', session.token, direct, '"short"']) {
      expect(text).not.toContain(secret);
    }
  });
});

describeEachDatabase('mutation and audit row commit together', (kind) => {
  let apps: AppsSharingDatabase;
  let t: StoreApp;
  let healthy: TestApp;
  beforeAll(async () => {
    apps = await appsSharingDatabase(kind, withFailingAudit);
    ({ healthy, altered: t } = apps);
  });
  afterAll(() => apps?.close());

  /** Tokens are created through the healthy app: creating one is itself an audited mutation. */
  const tokenFor = (grant: string) => healthy.token(grant);

  describe.each([
    ['PATCH profile', 'identity_write'],
    ['register', 'direct_auth'],
    ['revoke by id', 'revoke'],
    ['revoke-sessions', 'revoke'],
    ['authenticate', 'direct_auth'],
  ])('%s', (name, grant) => {
    it('answers 500 internal_error and leaves no trace when its audit row fails', async () => {
      const token = await tokenFor(grant);
      const identity = await createIdentity(healthy);
      const session = await createSession(healthy, identity.id);
      const requests: Record<string, [string, string, unknown]> = {
        'PATCH profile': ['PATCH', `/v1/identities/${identity.id}/profile`, { display_name: 'Z' }],
        register: [
          'POST',
          '/v1/register',
          { username: `${identity.username}-2`, password: PASSWORD },
        ],
        'revoke by id': ['POST', '/v1/sessions/revoke', { session_id: session.id }],
        'revoke-sessions': ['POST', `/v1/identities/${identity.id}/revoke-sessions`, undefined],
        authenticate: [
          'POST',
          '/v1/authenticate/password',
          { username: identity.username, password: PASSWORD },
        ],
      };
      const [method, url, body] = requests[name]!;
      const res = await t.call(method as 'POST', url, token, body);
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: 'internal_error' });
      const after = await healthy.deps.store.findIdentityById(identity.id);
      expect(after).toMatchObject({ display_name: identity.display_name });
      expect(
        await healthy.deps.store.findIdentityByUsername(`${identity.username}-2`),
      ).toBeUndefined();
      expect((await healthy.deps.store.findSessionById(session.id))?.revoked_at).toBeNull();
      // Nothing but the one session created above exists for the identity.
      expect(
        await healthy.deps.store.revokeIdentitySessions(identity.id, healthy.clock.now()),
      ).toBe(1);
    });
  });
});

describeEachDatabase('buffered audit rows survive a failed flush', (kind) => {
  it('keeps the rows of a refused flush and writes them, once, on the next', async () => {
    const store = await createMigratedStore(kind);
    const t = await appOnStore(withFlakyAuditFlush(store, 2), { SERVICE_AUDIT_FLUSH_MS: '600000' });
    try {
      const token = await t.token('identity_read');
      await t.call('GET', '/v1/identities?username=first-lookup', token);
      await t.deps.audit.flush(); // refused
      await t.call('GET', '/v1/identities?username=second-lookup', token);
      await t.deps.audit.flush(); // refused again
      const lookups = async () =>
        (await store.listAuditRecords(100))
          .filter((row) => row.action === 'identity_lookup')
          .map((row) => JSON.parse(row.details).username as string);
      expect(await lookups()).toEqual([]);
      await t.deps.audit.flush();
      expect((await lookups()).sort()).toEqual(['first-lookup', 'second-lookup']);
      await t.deps.audit.flush();
      expect(await lookups()).toHaveLength(2);
    } finally {
      await t.close(); // closes the store, which drops its database
    }
  });
});
