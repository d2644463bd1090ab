import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, expectError, expectValidation } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { attach, detach, linkedIdentity, newPair, UNKNOWN_ID } from './helpers.js';

const OTHER_OWNER = 'the (provider, subject) pair is already linked to another identity';

/** SPEC.md 4.5-4.7, 3.4 (attach, confirm, detach rows) and API-DECISIONS 3. */
describeEachDatabase('link management', (kind) => {
  let t: TestApp;
  let link: string;
  let read: string;
  let auth: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    link = await t.token('external_link');
    read = await t.token('identity_read');
    auth = await t.token('external_auth');
  });
  afterAll(() => t?.close());

  const iso = () => new Date(t.clock.now()).toISOString();
  const list = (id: string) => t.call('GET', `/v1/identities/${id}/links`, read);

  describe('POST /v1/identities/{id}/links', () => {
    it.each([
      ['verified omitted', {}],
      ['verified false', { verified: false }],
    ])('attaches an unverified link with %s: 201 Link', async (_label, extra) => {
      const identity = await createIdentity(t);
      const pair = newPair();
      const res = await attach(t, link, identity.id, { ...pair, ...extra });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        ...pair,
        identity_id: identity.id,
        verified_at: null,
        linked_at: iso(),
      });
    });

    it('attaches a verified link with verified true', async () => {
      const identity = await createIdentity(t);
      const pair = newPair();
      const res = await attach(t, link, identity.id, { ...pair, verified: true });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ verified_at: iso(), linked_at: iso() });
    });

    it('confirms a pending link on re-post with verified true, keeping linked_at', async () => {
      const identity = await createIdentity(t);
      const pair = newPair('email');
      const linkedAt = iso();
      await attach(t, link, identity.id, pair);
      t.clock.advance(60_000);
      const res = await attach(t, link, identity.id, { ...pair, verified: true });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        ...pair,
        identity_id: identity.id,
        verified_at: iso(),
        linked_at: linkedAt,
      });
    });

    it('is idempotent: re-posts never un-verify nor move the first confirmation', async () => {
      const identity = await createIdentity(t);
      const pair = newPair();
      const first = (await attach(t, link, identity.id, { ...pair, verified: true })).json();
      for (const extra of [{ verified: true }, { verified: false }, {}]) {
        t.clock.advance(1000);
        const res = await attach(t, link, identity.id, { ...pair, ...extra });
        expect(res.statusCode).toBe(201);
        expect(res.json()).toEqual(first);
      }
      expect((await list(identity.id)).json()).toEqual([first]);
    });

    it('re-posting a pending link unverified leaves it pending', async () => {
      const identity = await createIdentity(t);
      const pair = newPair();
      const first = (await attach(t, link, identity.id, pair)).json();
      t.clock.advance(1000);
      expect((await attach(t, link, identity.id, { ...pair, verified: false })).json()).toEqual(
        first,
      );
    });

    it.each([
      ['verified', true],
      ['pending', false],
    ])(
      'refuses a pair owned (%s) by another identity: 422, nothing moved',
      async (_label, ownerVerified) => {
        const owner = await createIdentity(t);
        const intruder = await createIdentity(t);
        const pair = newPair();
        await attach(t, link, owner.id, { ...pair, verified: ownerVerified });
        const stored = await t.deps.store.findLink(pair.provider, pair.subject);
        for (const verified of [true, false]) {
          expectValidation(await attach(t, link, intruder.id, { ...pair, verified }), OTHER_OWNER);
        }
        expect(await t.deps.store.findLink(pair.provider, pair.subject)).toEqual(stored);
        expect((await list(intruder.id)).json()).toEqual([]);
      },
    );

    it('answers 404 for an unknown or malformed identity id, storing nothing', async () => {
      for (const id of [UNKNOWN_ID, 'not-a-uuid']) {
        const pair = newPair();
        expectError(await attach(t, link, id, { ...pair, verified: true }), 404, 'not_found');
        expect(await t.deps.store.findLink(pair.provider, pair.subject)).toBeUndefined();
      }
    });

    it.each([
      ['a string verified', { verified: 'true' }],
      ['an unknown field', { identity_id: UNKNOWN_ID }],
      ['no subject', { subject: undefined }],
    ])('refuses a body with %s: 422', async (_label, extra) => {
      const identity = await createIdentity(t);
      expectValidation(await attach(t, link, identity.id, { ...newPair(), ...extra }));
    });
  });

  describe('GET /v1/identities/{id}/links', () => {
    it('lists by linked_at, oldest first, pending links included', async () => {
      const identity = await createIdentity(t);
      const bodies = [
        { provider: 'zeta', subject: 'z1', verified: true },
        { provider: 'alpha', subject: 'a1' },
        { provider: 'mid', subject: 'm1', verified: true },
      ];
      const attached = [];
      for (const body of bodies) {
        attached.push((await attach(t, link, identity.id, body)).json());
        t.clock.advance(1000);
      }
      // Confirming later does not reorder: linked_at, not verified_at, is the order.
      await attach(t, link, identity.id, { provider: 'alpha', subject: 'a1', verified: true });
      const res = await list(identity.id);
      expect(res.statusCode).toBe(200);
      expect(res.json().map((item: { provider: string }) => item.provider)).toEqual([
        'zeta',
        'alpha',
        'mid',
      ]);
      expect(res.json()[0]).toEqual(attached[0]);
      expect(res.json()[1]).toMatchObject({ verified_at: iso(), linked_at: attached[1].linked_at });
    });

    it('shows only the identity’s own links; an identity without links has []', async () => {
      const lonely = await createIdentity(t);
      const busy = await createIdentity(t);
      await attach(t, link, busy.id, newPair());
      expect((await list(lonely.id)).json()).toEqual([]);
      expect((await list(busy.id)).json()).toHaveLength(1);
    });

    it('includes the link created by sign-in', async () => {
      const id = await linkedIdentity(t, auth);
      const [only] = (await list(id)).json();
      expect(only).toMatchObject({ provider: 'seed-provider', identity_id: id });
      expect(only.verified_at).toBe(only.linked_at);
    });

    it('answers 404 for an unknown or malformed identity id', async () => {
      expectError(await list(UNKNOWN_ID), 404, 'not_found');
      expectError(await list('nope'), 404, 'not_found');
    });
  });

  describe('DELETE /v1/identities/{id}/links', () => {
    it('removes the identity’s link: 204 without a body', async () => {
      const identity = await createIdentity(t);
      const [keep, drop] = [newPair(), newPair()];
      await attach(t, link, identity.id, { ...keep, verified: true });
      await attach(t, link, identity.id, drop);
      const res = await detach(t, link, identity.id, drop);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(await t.deps.store.findLink(drop.provider, drop.subject)).toBeUndefined();
      expect((await list(identity.id)).json()).toEqual([
        expect.objectContaining({ subject: keep.subject }),
      ]);
    });

    it('refuses a link of another identity with 404 not_found, removing nothing', async () => {
      const owner = await createIdentity(t);
      const other = await createIdentity(t);
      const pair = newPair();
      await attach(t, link, owner.id, { ...pair, verified: true });
      expectError(await detach(t, link, other.id, pair), 404, 'not_found');
      expect((await t.deps.store.findLink(pair.provider, pair.subject))?.identity_id).toBe(
        owner.id,
      );
    });

    it('answers 404 for an absent link, a second delete, and an unknown identity', async () => {
      const identity = await createIdentity(t);
      const pair = newPair();
      expectError(await detach(t, link, identity.id, pair), 404, 'not_found');
      await attach(t, link, identity.id, pair);
      expect((await detach(t, link, identity.id, pair)).statusCode).toBe(204);
      expectError(await detach(t, link, identity.id, pair), 404, 'not_found');
      expectError(await detach(t, link, UNKNOWN_ID, pair), 404, 'not_found');
      expectError(await detach(t, link, 'not-a-uuid', pair), 404, 'not_found');
    });

    it('lets an identity lose its last sign-in method (not prevented)', async () => {
      const id = await linkedIdentity(t, auth);
      const [only] = (await list(id)).json();
      const res = await detach(t, link, id, { provider: only.provider, subject: only.subject });
      expect(res.statusCode).toBe(204);
      expect((await list(id)).json()).toEqual([]);
    });

    it.each([
      ['no body', undefined],
      ['no subject', { provider: 'p' }],
      ['an unknown field', { provider: 'p', subject: 's', verified: true }],
    ])('refuses %s: 422', async (_label, body) => {
      const identity = await createIdentity(t);
      expectValidation(await detach(t, link, identity.id, body));
    });
  });
});
