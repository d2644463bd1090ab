import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, expectValidation } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { attach, countRows, detach, newSeed, signIn } from './helpers.js';

/** Values at and just past SPEC.md 8's bound of 255 bytes of UTF-8. */
const FITS: [string, string][] = [
  ['255 ASCII bytes', 'a'.repeat(255)],
  ['85 x "€" (3 bytes each: 255 bytes, 85 characters)', '€'.repeat(85)],
  ['63 emoji and 3 ASCII (4-byte characters: 255 bytes)', '😀'.repeat(63) + 'abc'],
  ['a single byte', 'x'],
];
const TOO_LONG: [string, string, number][] = [
  ['256 ASCII bytes', 'a'.repeat(256), 256],
  ['86 x "€" (258 bytes in only 86 characters)', '€'.repeat(86), 258],
  ['64 emoji (256 bytes in 64 characters)', '😀'.repeat(64), 256],
  ['254 ASCII and one "é" (256 bytes)', 'a'.repeat(254) + 'é', 256],
];
const NOT_TEXT: [string, string][] = [
  ['a NUL character', 'abc\u0000def'],
  ['a lone UTF-16 surrogate', 'abc\ud800def'],
];

let unique = 0;
/** Puts `value` in one field and a fresh value in the other, so every case is a new pair. */
function pairWith(field: 'provider' | 'subject', value: string) {
  unique += 1;
  const other = `other-${unique}-${Math.random().toString(36).slice(2, 8)}`;
  return field === 'provider'
    ? { provider: value, subject: other }
    : { provider: other, subject: value };
}

/** SPEC.md 2.2 and 8: provider and subject are 1-255 bytes of UTF-8 on every link endpoint. */
describeEachDatabase('link key limits', (kind) => {
  let t: TestApp;
  let auth: string;
  let link: string;
  let read: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    auth = await t.token('external_auth');
    link = await t.token('external_link');
    read = await t.token('identity_read');
  });
  afterAll(() => t?.close());

  /** Sign-in, attach (to a new identity) and detach each refuse `pair` with 422 `message`. */
  async function expectRefusedEverywhere(
    pair: { provider: string; subject: string },
    message: string,
  ) {
    const identity = await createIdentity(t);
    expectValidation(await signIn(t, auth, { ...pair, seed: newSeed() }), message);
    expectValidation(await attach(t, link, identity.id, pair), message);
    expectValidation(await detach(t, link, identity.id, pair), message);
  }

  describe.each(['provider', 'subject'] as const)('%s', (field) => {
    it.each(FITS)('accepts %s on sign-in, attach, list and detach', async (_label, value) => {
      const signedIn = await signIn(t, auth, { ...pairWith(field, value), seed: newSeed() });
      expect(signedIn.statusCode).toBe(201);

      const identity = await createIdentity(t);
      const pair = pairWith(field, value);
      const attached = await attach(t, link, identity.id, pair);
      expect(attached.statusCode).toBe(201);
      expect(attached.json()[field]).toBe(value);
      const listed = await t.call('GET', `/v1/identities/${identity.id}/links`, read);
      expect(listed.json()).toEqual([attached.json()]);
      expect((await detach(t, link, identity.id, pair)).statusCode).toBe(204);
    });

    it.each(TOO_LONG)('refuses %s with 422 on every endpoint', async (_label, value, bytes) => {
      const message = `${field} must be 1-255 bytes of UTF-8 (it is ${bytes} bytes)`;
      const links = await countRows(t.db, 'links');
      await expectRefusedEverywhere(pairWith(field, value), message);
      expect(await countRows(t.db, 'links')).toBe(links);
    });

    it('refuses an empty string with 422 on every endpoint', async () => {
      const message = `${field} must be 1-255 bytes of UTF-8 (it is 0 bytes)`;
      await expectRefusedEverywhere(pairWith(field, ''), message);
    });

    it.each(NOT_TEXT)('refuses %s with 422 on every endpoint', async (_label, value) => {
      const message = `${field} must be valid UTF-8 text without NUL characters`;
      const links = await countRows(t.db, 'links');
      await expectRefusedEverywhere(pairWith(field, value), message);
      expect(await countRows(t.db, 'links')).toBe(links);
    });
  });

  it('checks the pair before the seed and the identity', async () => {
    const tooLong = { provider: '€'.repeat(86), subject: 's' };
    expectValidation(await signIn(t, auth, { ...tooLong, seed: 'garbage' }), /^provider must/);
    expectValidation(
      await attach(t, link, '0190c7f8-0000-7000-8000-000000000000', tooLong),
      /^provider must/,
    );
  });
});
