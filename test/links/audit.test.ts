import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  auditEntries,
  auditSince,
  createIdentity,
  testActor,
  uniqueName,
} from '../helpers/core.js';
import { expectEachOutcomeAudited } from '../helpers/core-endpoints.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  type AppsSharingDatabase,
  appsSharingDatabase,
  type StoreApp,
  withFailingAudit,
} from '../helpers/store-app.js';
import { LINK_ENDPOINTS, insertLink } from './endpoints.js';
import { attach, countRows, detach, newPair, newSeed, signIn } from './helpers.js';

/** API-DECISIONS 3 (Audit) for the link endpoints: every call presenting a token is recorded. */
describeEachDatabase('link audit', (kind) => {
  let t: TestApp;
  let auth: string;
  let link: string;
  let read: string;
  let serviceIds: Map<string, string>;
  beforeAll(async () => {
    t = await createTestApp(kind);
    auth = await t.token('external_auth');
    link = await t.token('external_link');
    read = await t.token('identity_read');
    const services = await t.deps.store.listServiceTokens();
    serviceIds = new Map(services.map((service) => [service.name, service.id]));
  });
  afterAll(() => t?.close());

  /** The single new audit row the call `run` leaves behind. */
  async function onlyRow(run: () => Promise<unknown>) {
    const before = (await auditEntries(t)).length;
    await run();
    const rows = await auditSince(t, before);
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  it.each(LINK_ENDPOINTS)(
    '$name: allowed, forbidden and unauthenticated calls are all recorded',
    async (endpoint) => {
      await expectEachOutcomeAudited(t, endpoint);
    },
  );

  describe('sign-in', () => {
    it('records creation and return with identity, pair and session, never the token', async () => {
      const pair = newPair();
      let created: { token: string; session: { id: string; identity: { id: string } } };
      const first = await onlyRow(async () => {
        created = (await signIn(t, auth, { ...pair, seed: newSeed() })).json();
      });
      expect(first).toEqual({
        action: 'authenticate_link',
        service_name: expect.any(String),
        service_id: serviceIds.get(first.service_name!),
        target_identity: created!.session.identity.id,
        timestamp: new Date(t.clock.now()).toISOString(),
        outcome: 'ok',
        details: {
          ...pair,
          created: true,
          sign_in_method: 'link',
          session_id: created!.session.id,
        },
      });
      let returned: { token: string; session: { id: string } };
      const second = await onlyRow(async () => {
        returned = (await signIn(t, auth, pair)).json();
      });
      expect(second).toMatchObject({
        target_identity: created!.session.identity.id,
        outcome: 'ok',
        details: { ...pair, created: false, session_id: returned!.session.id },
      });
      const text = JSON.stringify(await auditEntries(t));
      expect(text).not.toContain(created!.token);
      expect(text).not.toContain(returned!.token);
    });

    it('records refusals with their code and the identity concerned', async () => {
      const pending = await createIdentity(t);
      const pendingPair = newPair();
      await attach(t, link, pending.id, pendingPair);
      expect(await onlyRow(() => signIn(t, auth, pendingPair))).toMatchObject({
        action: 'authenticate_link',
        outcome: 'validation_error',
        target_identity: pending.id,
        details: {
          ...pendingPair,
          sign_in_method: 'link',
          method: 'POST',
          path: '/v1/authenticate/link',
        },
      });

      const disabled = await createIdentity(t);
      const disabledPair = newPair();
      await insertLink(t, disabled.id, disabledPair);
      await setIdentityState(t.deps, testActor, disabled.id, 'disabled');
      expect(await onlyRow(() => signIn(t, auth, disabledPair))).toMatchObject({
        outcome: 'identity_disabled',
        target_identity: disabled.id,
      });

      const taken = await createIdentity(t);
      const takenPair = newPair();
      const seed = { username: taken.username, display_name: 'X' };
      expect(await onlyRow(() => signIn(t, auth, { ...takenPair, seed }))).toMatchObject({
        outcome: 'username_taken',
        target_identity: null,
        details: { ...takenPair },
      });
    });
  });

  describe('management', () => {
    it('records attach, confirm, list and detach with the identity and the pair', async () => {
      const identity = await createIdentity(t);
      const pair = newPair();
      expect(await onlyRow(() => attach(t, link, identity.id, pair))).toMatchObject({
        action: 'link_attach',
        target_identity: identity.id,
        outcome: 'ok',
        details: { ...pair, created: true, verified: false },
      });
      expect(
        await onlyRow(() => attach(t, link, identity.id, { ...pair, verified: true })),
      ).toMatchObject({ details: { ...pair, created: false, verified: true } });
      expect(
        await onlyRow(() => t.call('GET', `/v1/identities/${identity.id}/links`, read)),
      ).toMatchObject({
        action: 'link_list',
        target_identity: identity.id,
        outcome: 'ok',
        details: { method: 'GET', path: '/v1/identities/:id/links' },
      });
      expect(await onlyRow(() => detach(t, link, identity.id, pair))).toMatchObject({
        action: 'link_detach',
        target_identity: identity.id,
        outcome: 'ok',
        details: { ...pair },
      });
    });

    it('records refused management calls with the identity in the path', async () => {
      const owner = await createIdentity(t);
      const intruder = await createIdentity(t);
      const pair = newPair();
      await insertLink(t, owner.id, pair);
      expect(await onlyRow(() => attach(t, link, intruder.id, pair))).toMatchObject({
        action: 'link_attach',
        outcome: 'validation_error',
        target_identity: intruder.id,
        details: { ...pair },
      });
      expect(await onlyRow(() => detach(t, link, intruder.id, pair))).toMatchObject({
        action: 'link_detach',
        outcome: 'not_found',
        target_identity: intruder.id,
      });
      const unknown = '0190c7f8-0000-7000-8000-000000000000';
      expect(
        await onlyRow(() => t.call('GET', `/v1/identities/${unknown}/links`, read)),
      ).toMatchObject({ action: 'link_list', outcome: 'not_found', target_identity: unknown });
    });
  });
});

/** Identity, link, session and audit row commit in one transaction, or none of them does. */
describeEachDatabase('link mutations and their audit row commit together', (kind) => {
  let apps: AppsSharingDatabase;
  let t: StoreApp;
  let healthy: TestApp;
  beforeAll(async () => {
    apps = await appsSharingDatabase(kind, withFailingAudit);
    ({ healthy, altered: t } = apps);
  });
  afterAll(() => apps?.close());

  const snapshot = () =>
    Promise.all(
      (['identities', 'links', 'sessions'] as const).map((table) => countRows(healthy.db, table)),
    );

  async function expectNoTrace(
    method: 'POST' | 'DELETE',
    url: string,
    grant: string,
    body: unknown,
  ) {
    const token = await healthy.token(grant);
    const before = await snapshot();
    const res = await t.call(method, url, token, body);
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 500,
      body: { error: 'internal_error' },
    });
    expect(await snapshot()).toEqual(before);
  }

  it('first sign-in: no identity, link or session is left', async () => {
    const name = uniqueName('atomic');
    const pair = newPair();
    await expectNoTrace('POST', '/v1/authenticate/link', 'external_auth', {
      ...pair,
      seed: newSeed(name),
    });
    expect(await healthy.deps.store.findIdentityByUsername(name)).toBeUndefined();
    expect(await healthy.deps.store.findLink(pair.provider, pair.subject)).toBeUndefined();
  });

  it('returning sign-in: no session is left', async () => {
    const identity = await createIdentity(healthy);
    const pair = newPair();
    await insertLink(healthy, identity.id, pair);
    await expectNoTrace('POST', '/v1/authenticate/link', 'external_auth', pair);
  });

  it('attach and confirm: nothing is stored or changed', async () => {
    const identity = await createIdentity(healthy);
    const url = `/v1/identities/${identity.id}/links`;
    await expectNoTrace('POST', url, 'external_link', { ...newPair(), verified: true });
    const pending = newPair();
    await healthy.deps.store.insertLink({
      ...pending,
      identity_id: identity.id,
      verified_at: null,
      linked_at: healthy.clock.now(),
    });
    await expectNoTrace('POST', url, 'external_link', { ...pending, verified: true });
    expect(
      (await healthy.deps.store.findLink(pending.provider, pending.subject))?.verified_at,
    ).toBeNull();
  });

  it('detach: the link stays', async () => {
    const identity = await createIdentity(healthy);
    const pair = newPair();
    await insertLink(healthy, identity.id, pair);
    await expectNoTrace('DELETE', `/v1/identities/${identity.id}/links`, 'external_link', pair);
    expect(await healthy.deps.store.findLink(pair.provider, pair.subject)).toBeDefined();
  });
});
