import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import type { StoreHandle } from '../../src/storage/store.js';
import type { TestApp } from '../helpers/app.js';
import { createIdentity, expectError, expectValidation, testActor } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  type AppsSharingDatabase,
  appsSharingDatabase,
  type StoreApp,
} from '../helpers/store-app.js';
import { countRows, newPair, newSeed } from './helpers.js';

/**
 * The store, except that the first lookup of each subject in `stale` misses: the view of
 * a racer that read before the winner committed. Lookups inside transactions are real.
 */
function staleFirstLookup(handle: StoreHandle, stale: Set<string>): StoreHandle {
  return {
    ...handle,
    findLink: async (provider, subject) =>
      stale.delete(subject) ? undefined : handle.findLink(provider, subject),
  };
}

/**
 * The losing side of SPEC.md 4.4's race, made deterministic: the pair is linked by the
 * time the loser's create transaction runs, so its inserts hit the constraints.
 */
describeEachDatabase('link sign-in that loses the race', (kind) => {
  let apps: AppsSharingDatabase;
  let healthy: TestApp;
  let racer: StoreApp;
  let auth: string;
  const stale = new Set<string>();
  beforeAll(async () => {
    apps = await appsSharingDatabase(kind, (store) => staleFirstLookup(store, stale));
    ({ healthy, altered: racer } = apps);
    auth = await healthy.token('external_auth');
  });
  afterAll(() => apps?.close());

  /** Links the pair through a normal sign-in and returns the winner's identity id. */
  async function win(pair: { provider: string; subject: string }, seed = newSeed()) {
    const res = await healthy.call('POST', '/v1/authenticate/link', auth, { ...pair, seed });
    expect(res.statusCode).toBe(201);
    return res.json().session.identity.id as string;
  }

  function lose(body: { provider: string; subject: string; seed?: unknown }) {
    stale.add(body.subject);
    return racer.call('POST', '/v1/authenticate/link', auth, body);
  }

  const totals = () =>
    Promise.all(['identities', 'links'].map((table) => countRows(healthy.db, table as 'links')));

  it('same seed username: the username clash resolves to the winner, never 409', async () => {
    const pair = newPair();
    const seed = newSeed();
    const winner = await win(pair, seed);
    const before = await totals();
    const res = await lose({ ...pair, seed });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ created: false, session: { identity: { id: winner } } });
    expect(await totals()).toEqual(before);
    expect(stale.size).toBe(0);
  });

  it('another seed username: the loser’s identity is rolled back with its link', async () => {
    const pair = newPair();
    const winner = await win(pair);
    const seed = newSeed();
    const before = await totals();
    const res = await lose({ ...pair, seed });
    expect(res.statusCode).toBe(200);
    expect(res.json().session.identity.id).toBe(winner);
    expect(await healthy.deps.store.findIdentityByUsername(seed.username)).toBeUndefined();
    expect(await totals()).toEqual(before);
  });

  it('a pending claim found on the retry is still refused with 422, not moved', async () => {
    const owner = await createIdentity(healthy);
    const pair = newPair();
    const now = healthy.clock.now();
    await healthy.deps.store.insertLink({
      ...pair,
      identity_id: owner.id,
      verified_at: null,
      linked_at: now,
    });
    expectValidation(await lose({ ...pair, seed: newSeed() }), /unverified/);
    expect(await healthy.deps.store.findLink(pair.provider, pair.subject)).toMatchObject({
      identity_id: owner.id,
      verified_at: null,
    });
  });

  it('a disabled winner found on the retry is refused with 403', async () => {
    const pair = newPair();
    const winner = await win(pair);
    await setIdentityState(healthy.deps, testActor, winner, 'disabled');
    expectError(await lose({ ...pair, seed: newSeed() }), 403, 'identity_disabled');
  });

  it('a username held by an identity not linked to the pair is 409', async () => {
    const holder = await createIdentity(healthy);
    const pair = newPair();
    const res = await lose({ ...pair, seed: { username: holder.username, display_name: 'X' } });
    expectError(res, 409, 'username_taken');
    expect(await healthy.deps.store.findLink(pair.provider, pair.subject)).toBeUndefined();
  });
});
