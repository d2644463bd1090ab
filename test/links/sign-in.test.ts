import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  createIdentity,
  expectError,
  expectValidation,
  testActor,
  uniqueName,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { attach, countRows, detach, newPair, newSeed, signIn, TOKEN_PATTERN } from './helpers.js';

const HOUR = 3_600_000;

/** SPEC.md 4.4, 3.4 (rows "absent -> authenticate/link") and API-DECISIONS 3. */
describeEachDatabase('link sign-in', (kind) => {
  let t: TestApp;
  let auth: string;
  let link: string;
  let introspect: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    auth = await t.token('external_auth');
    link = await t.token('external_link');
    introspect = await t.token('introspect');
  });
  afterAll(() => t?.close());

  /** Counts of identities, links and sessions, to prove a refusal wrote nothing. */
  const counts = async () =>
    Promise.all([
      countRows(t.db, 'identities'),
      countRows(t.db, 'links'),
      countRows(t.db, 'sessions'),
    ]);

  describe('first sight of a pair', () => {
    it('creates identity, verified link and a link session: 201, created true', async () => {
      const pair = newPair();
      const name = uniqueName('Octo');
      const res = await signIn(t, auth, {
        ...pair,
        seed: { username: name, display_name: '  The Octocat  ' },
      });
      expect(res.statusCode).toBe(201);
      const now = t.clock.now();
      const iso = new Date(now).toISOString();
      const body = res.json();
      expect(body).toEqual({
        created: true,
        token: expect.stringMatching(TOKEN_PATTERN),
        session: {
          id: expect.any(String),
          issued_at: iso,
          expires_at: new Date(now + 72 * HOUR).toISOString(),
          authenticated_via: 'link',
          aal: 'aal1',
          identity: {
            id: expect.any(String),
            username: name.toLowerCase(),
            display_name: 'The Octocat',
            avatar_url: null,
            email: null,
            email_verified: false,
            state: 'active',
            created_at: iso,
            updated_at: iso,
          },
        },
      });
      const identityId = body.session.identity.id as string;
      expect(await t.deps.store.findLink(pair.provider, pair.subject)).toEqual({
        ...pair,
        identity_id: identityId,
        verified_at: now,
        linked_at: now,
      });
      // No password was set: the identity can only sign in through its links.
      expect((await t.deps.store.findIdentityById(identityId))?.password_hash).toBeNull();
    });

    it('mints a token that verifies as a link session', async () => {
      const res = await signIn(t, auth, { ...newPair(), seed: newSeed() });
      const verified = await t.call('POST', '/v1/sessions/verify', introspect, {
        token: res.json().token,
      });
      expect(verified.statusCode).toBe(200);
      expect(verified.json()).toEqual(res.json().session);
      expect(verified.json().authenticated_via).toBe('link');
    });

    it('answers 409 username_taken for a seed username in use, creating nothing', async () => {
      const owner = await createIdentity(t, uniqueName('taken'));
      const before = await counts();
      const pair = newPair();
      const res = await signIn(t, auth, {
        ...pair,
        seed: { username: owner.username.toUpperCase(), display_name: 'Someone Else' },
      });
      expectError(res, 409, 'username_taken');
      expect(await counts()).toEqual(before);
      expect(await t.deps.store.findLink(pair.provider, pair.subject)).toBeUndefined();
    });

    it.each([
      ['no seed', undefined, /^seed .*required/],
      ['a string seed', 'alice', /^seed must be an object/],
      ['a null seed', null, /^seed must be an object/],
      ['an array seed', [], /^seed must be an object/],
      ['no username', { display_name: 'A' }, 'seed: missing required field username'],
      ['no display_name', { username: 'abcd' }, 'seed: missing required field display_name'],
      ['a numeric username', { username: 42, display_name: 'A' }, 'seed.username must be string'],
      [
        'an invalid username',
        { username: 'a b', display_name: 'A' },
        /^seed.username must be 3-64/,
      ],
      [
        'a blank display_name',
        { username: 'abcde', display_name: '   ' },
        /^seed.display_name must be 1-128/,
      ],
      [
        'an unknown seed field',
        { username: 'abcdef', display_name: 'A', password: 'x' },
        'seed: unknown field password',
      ],
    ])('refuses %s for a new pair with 422, creating nothing', async (_label, seed, message) => {
      const before = await counts();
      const pair = newPair();
      expectValidation(await signIn(t, auth, { ...pair, seed }), message);
      expect(await counts()).toEqual(before);
    });

    it.each([
      ['no provider', { subject: 's', seed: newSeed() }],
      ['no subject', { provider: 'p', seed: newSeed() }],
      ['a numeric subject', { provider: 'p', subject: 7, seed: newSeed() }],
      ['an unknown field', { provider: 'p', subject: 's', seed: newSeed(), verified: true }],
      ['an array body', [{ provider: 'p', subject: 's' }]],
    ])('refuses a body with %s: 422', async (_label, body) => {
      expectValidation(await signIn(t, auth, body));
    });

    it('matches provider and subject exactly: case and normalisation make new pairs', async () => {
      const subject = `Caf\u00e9-${uniqueName()}`;
      const first = await signIn(t, auth, { provider: 'GitHub', subject, seed: newSeed() });
      expect(first.statusCode).toBe(201);
      for (const other of [
        { provider: 'github', subject },
        { provider: 'GitHub', subject: subject.toLowerCase() },
        { provider: 'GitHub', subject: subject.normalize('NFD') },
        { provider: 'GitHub ', subject },
      ]) {
        const res = await signIn(t, auth, { ...other, seed: newSeed() });
        expect(res.statusCode).toBe(201);
        expect(res.json().session.identity.id).not.toBe(first.json().session.identity.id);
      }
    });
  });

  describe('returning user', () => {
    let pair: { provider: string; subject: string };
    let identityId: string;
    let username: string;
    beforeAll(async () => {
      pair = newPair();
      const res = await signIn(t, auth, { ...pair, seed: newSeed() });
      identityId = res.json().session.identity.id;
      username = res.json().session.identity.username;
    });

    it('answers 200, created false, a fresh link session for the same identity', async () => {
      t.clock.advance(HOUR);
      const first = await signIn(t, auth, { ...pair, seed: newSeed() });
      const second = await signIn(t, auth, { ...pair, seed: newSeed() });
      for (const res of [first, second]) {
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({
          created: false,
          token: expect.stringMatching(TOKEN_PATTERN),
          session: {
            authenticated_via: 'link',
            issued_at: new Date(t.clock.now()).toISOString(),
            identity: { id: identityId, username },
          },
        });
      }
      expect(first.json().token).not.toBe(second.json().token);
      expect(first.json().session.id).not.toBe(second.json().session.id);
    });

    it.each([
      ['absent', undefined],
      ['a string', 'not a seed'],
      ['a number', 42],
      ['null', null],
      ['invalid fields', { username: '', display_name: '', extra: true }],
    ])('ignores the seed entirely when it is %s', async (_label, seed) => {
      const body = seed === undefined ? pair : { ...pair, seed };
      const res = await signIn(t, auth, body);
      expect(res.statusCode).toBe(200);
      expect(res.json().session.identity.id).toBe(identityId);
    });

    it('ignores a seed naming a taken username and leaves the profile alone', async () => {
      const other = await createIdentity(t, uniqueName('other'));
      const res = await signIn(t, auth, {
        ...pair,
        seed: { username: other.username, display_name: 'Changed Name' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().session.identity).toMatchObject({ id: identityId, username });
      expect((await t.deps.store.findIdentityById(identityId))?.display_name).not.toBe(
        'Changed Name',
      );
    });

    it('refuses a disabled identity with 403 identity_disabled; enabling restores it', async () => {
      await setIdentityState(t.deps, testActor, identityId, 'disabled');
      const sessions = await countRows(t.db, 'sessions');
      expectError(await signIn(t, auth, { ...pair, seed: newSeed() }), 403, 'identity_disabled');
      expect(await countRows(t.db, 'sessions')).toBe(sessions);
      await setIdentityState(t.deps, testActor, identityId, 'active');
      expect((await signIn(t, auth, pair)).statusCode).toBe(200);
    });
  });

  describe('pending claims (unverified links)', () => {
    it('are never resolved and never moved: 422, even with a valid seed', async () => {
      const owner = await createIdentity(t);
      const pair = newPair();
      expect((await attach(t, link, owner.id, pair)).statusCode).toBe(201);
      const stored = await t.deps.store.findLink(pair.provider, pair.subject);
      const before = await counts();
      for (const body of [pair, { ...pair, seed: newSeed() }]) {
        expectValidation(await signIn(t, auth, body), /unverified/);
      }
      expect(await counts()).toEqual(before);
      expect(await t.deps.store.findLink(pair.provider, pair.subject)).toEqual(stored);
    });

    it('sign in once confirmed, as the identity that holds them', async () => {
      const owner = await createIdentity(t);
      const pair = newPair('email');
      await attach(t, link, owner.id, pair);
      expect((await signIn(t, auth, pair)).statusCode).toBe(422);
      expect((await attach(t, link, owner.id, { ...pair, verified: true })).statusCode).toBe(201);
      const res = await signIn(t, auth, { ...pair, seed: newSeed() });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ created: false, session: { identity: { id: owner.id } } });
    });
  });

  it('a link attached verified signs in as its identity (200)', async () => {
    const owner = await createIdentity(t);
    const pair = newPair('google');
    await attach(t, link, owner.id, { ...pair, verified: true });
    const res = await signIn(t, auth, pair);
    expect(res.statusCode).toBe(200);
    expect(res.json().session.identity.id).toBe(owner.id);
  });

  it('a detached pair is unknown again: the next sign-in creates a new identity', async () => {
    const pair = newPair();
    const first = await signIn(t, auth, { ...pair, seed: newSeed() });
    const firstId = first.json().session.identity.id;
    expect((await detach(t, link, firstId, pair)).statusCode).toBe(204);
    const again = await signIn(t, auth, { ...pair, seed: newSeed() });
    expect(again.statusCode).toBe(201);
    expect(again.json().session.identity.id).not.toBe(firstId);
    expect((await t.deps.store.findLink(pair.provider, pair.subject))?.identity_id).toBe(
      again.json().session.identity.id,
    );
  });
});
