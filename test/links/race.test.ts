import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, uniqueName } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { attach, countRows, newPair, newSeed, signIn } from './helpers.js';

const RACERS = 50;

/** Status codes in ascending order with how often each occurred, e.g. { 200: 49, 201: 1 }. */
function tally(responses: LightMyRequestResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const res of responses) counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1;
  return counts;
}

/**
 * SPEC.md 4.4 and DESIGN 3: concurrent first sign-ins for one pair create one identity;
 * uniqueness is settled by the database constraints, never by a check-then-insert.
 */
describeEachDatabase('link races in one process', (kind) => {
  let t: TestApp;
  let auth: string;
  let link: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    auth = await t.token('external_auth');
    link = await t.token('external_link');
  });
  afterAll(() => t?.close());

  const totals = () =>
    Promise.all(
      (['identities', 'links', 'sessions'] as const).map((table) => countRows(t.db, table)),
    );

  function expectOneCreated(responses: LightMyRequestResponse[]): string {
    expect(tally(responses)).toEqual({ 200: RACERS - 1, 201: 1 });
    const bodies = responses.map((res) => res.json());
    expect(bodies.filter((body) => body.created === true)).toHaveLength(1);
    const ids = new Set(bodies.map((body) => body.session.identity.id as string));
    expect(ids.size).toBe(1);
    expect(new Set(bodies.map((body) => body.token)).size).toBe(RACERS);
    return [...ids][0]!;
  }

  it(`${RACERS} first sign-ins with one seed: one identity, one created`, async () => {
    const [identities, links, sessions] = await totals();
    const pair = newPair();
    const seed = newSeed();
    const responses = await Promise.all(
      Array.from({ length: RACERS }, () => signIn(t, auth, { ...pair, seed })),
    );
    const id = expectOneCreated(responses);
    expect(await totals()).toEqual([identities! + 1, links! + 1, sessions! + RACERS]);
    expect(await t.deps.store.findLink(pair.provider, pair.subject)).toMatchObject({
      identity_id: id,
      verified_at: expect.any(Number),
    });
  });

  it(`${RACERS} first sign-ins with ${RACERS} different seeds: one identity`, async () => {
    const [identities] = await totals();
    const pair = newPair();
    const seeds = Array.from({ length: RACERS }, () => newSeed());
    const responses = await Promise.all(seeds.map((seed) => signIn(t, auth, { ...pair, seed })));
    const id = expectOneCreated(responses);
    expect((await totals())[0]).toBe(identities! + 1);
    const winner = await t.deps.store.findIdentityById(id);
    const losers = seeds.filter((seed) => seed.username !== winner?.username);
    expect(losers).toHaveLength(RACERS - 1);
    for (const seed of losers) {
      expect(await t.deps.store.findIdentityByUsername(seed.username)).toBeUndefined();
    }
  });

  it(`${RACERS} new pairs wanting one username: one 201, the rest 409`, async () => {
    const [identities, links] = await totals();
    const seed = newSeed();
    const pairs = Array.from({ length: RACERS }, () => newPair());
    const responses = await Promise.all(pairs.map((pair) => signIn(t, auth, { ...pair, seed })));
    expect(tally(responses)).toEqual({ 201: 1, 409: RACERS - 1 });
    for (const res of responses.filter((res) => res.statusCode === 409)) {
      expect(res.json()).toEqual({ error: 'username_taken' });
    }
    expect((await totals()).slice(0, 2)).toEqual([identities! + 1, links! + 1]);
  });

  it('two pairs racing for one username: only the losing pair answers 409', async () => {
    const seed = newSeed();
    const [first, second] = [newPair(), newPair()];
    const half = RACERS / 2;
    // Interleaved so that neither pair gets a head start.
    const bodies = Array.from({ length: RACERS }, (_v, i) => ({
      ...(i % 2 === 0 ? first : second),
      seed,
    }));
    const responses = await Promise.all(bodies.map((body) => signIn(t, auth, body)));
    const winner = await t.deps.store.findIdentityByUsername(seed.username);
    const winning = (await t.deps.store.findLink(first.provider, first.subject)) ? first : second;
    expect((await t.deps.store.findLink(winning.provider, winning.subject))?.identity_id).toBe(
      winner?.id,
    );
    const losing = winning === first ? second : first;
    expect(await t.deps.store.findLink(losing.provider, losing.subject)).toBeUndefined();
    const of = (pair: typeof first) =>
      responses.filter((_res, i) => bodies[i]!.subject === pair.subject);
    expect(tally(of(winning))).toEqual({ 200: half - 1, 201: 1 });
    expect(tally(of(losing))).toEqual({ 409: half });
  });

  it('ten identities attaching one pair at once: one owner, the others 422', async () => {
    const identities = await Promise.all(Array.from({ length: 10 }, () => createIdentity(t)));
    const pair = newPair();
    const requests = identities.flatMap((identity) =>
      [true, false, true].map((verified) => ({ id: identity.id, verified })),
    );
    const responses = await Promise.all(
      requests.map(({ id, verified }) => attach(t, link, id, { ...pair, verified })),
    );
    const owner = (await t.deps.store.findLink(pair.provider, pair.subject))!.identity_id;
    responses.forEach((res, i) => {
      expect(res.statusCode).toBe(requests[i]!.id === owner ? 201 : 422);
    });
    const ownerBodies = responses.filter((res) => res.statusCode === 201).map((res) => res.json());
    expect(ownerBodies.at(-1)).toMatchObject({ identity_id: owner });
  });

  it('a sign-in and a pending attach racing for one pair never share or move it', async () => {
    for (let round = 0; round < 5; round += 1) {
      const claimant = await createIdentity(t);
      const pair = newPair();
      const name = uniqueName('race');
      const calls = Array.from({ length: 10 }, (_v, i) =>
        i === 5
          ? attach(t, link, claimant.id, pair)
          : signIn(t, auth, { ...pair, seed: newSeed(name) }),
      );
      const results = await Promise.all(calls);
      const attached = results[5]!;
      const signIns = results.filter((_res, i) => i !== 5);
      const stored = (await t.deps.store.findLink(pair.provider, pair.subject))!;
      if (stored.identity_id === claimant.id) {
        // The pending claim came first: sign-in never resolves it and creates nothing.
        expect(attached.statusCode).toBe(201);
        expect(stored.verified_at).toBeNull();
        expect(signIns.every((res) => res.statusCode === 422)).toBe(true);
        expect(await t.deps.store.findIdentityByUsername(name)).toBeUndefined();
      } else {
        expect(attached.statusCode).toBe(422);
        expect(tally(signIns)).toEqual({ 200: 8, 201: 1 });
        expect(stored.identity_id).toBe((await t.deps.store.findIdentityByUsername(name))?.id);
      }
    }
  });
});
