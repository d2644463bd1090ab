import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANTS } from '../../src/domain/service-tokens/service-token.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  createIdentity,
  expectError,
  expectValidation,
  PASSWORD,
  uniqueName,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

const USERNAME_RULE = /^username must be 3-64 characters/;
const PASSWORD_RULE = 'password must be between 8 and 256 characters long';

/** API-DECISIONS 3: every bad input is 422 `validation_error` with a message, nothing else. */
describeEachDatabase('input validation', (kind) => {
  let t: TestApp;
  let all: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    all = await t.token(...GRANTS);
  });
  afterAll(() => t?.close());

  const register = (body: unknown) => t.call('POST', '/v1/register', all, body);
  const raw = (url: string, contentType: string, payload: string | Buffer) =>
    t.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${all}`, 'content-type': contentType },
      payload,
    });

  describe('usernames', () => {
    it.each([
      ['too short', 'ab'],
      ['too long (65)', 'a'.repeat(65)],
      ['a space', 'al ice'],
      ['a slash', 'al/ice'],
      ['a leading dot', '.alice'],
      ['a leading dash', '-alice'],
      ['a non-ASCII letter', 'jörg'],
      ['empty', ''],
    ])('refuses %s', async (_label, username) => {
      expectValidation(await register({ username, password: PASSWORD }), USERNAME_RULE);
      expect(await t.deps.store.findIdentityByUsername(username.toLowerCase())).toBeUndefined();
    });

    it('accepts the bounds 3 and 64 and every allowed character', async () => {
      for (const username of ['ab3', 'b'.repeat(64), 'a1._-@+z']) {
        expect((await register({ username, password: PASSWORD })).statusCode).toBe(201);
      }
    });

    it('normalises with NFKC and lowercase (fullwidth and capitals)', async () => {
      const res = await register({ username: 'ＣＡＲＯＬ', password: PASSWORD });
      expect(res.statusCode).toBe(201);
      expect(res.json().username).toBe('carol');
      expectError(await register({ username: 'Carol', password: PASSWORD }), 409, 'username_taken');
    });
  });

  describe('passwords', () => {
    it.each([
      ['7 characters', 'x'.repeat(7)],
      ['257 characters', 'x'.repeat(257)],
      ['empty', ''],
    ])('refuses %s with a sentence', async (_label, password) => {
      expectValidation(await register({ username: uniqueName(), password }), PASSWORD_RULE);
    });

    it('accepts 8 and 256 characters, counted in code points', async () => {
      // Not one repeated character: the password policy refuses those as too easy to guess.
      for (const password of ['zq8vbt3w', 'kiwi-lantern-93 '.repeat(16), '🔑🐢🌵🎲🧭🪁🍋🦉']) {
        expect((await register({ username: uniqueName(), password })).statusCode).toBe(201);
      }
    });
  });

  describe('bodies', () => {
    it.each([
      ['an unknown field', { username: 'u-unknown', password: PASSWORD, admin: true }, /admin/],
      ['a missing password', { username: 'u-missing' }, /password/],
      ['a missing username', { password: PASSWORD }, /username/],
      ['a number as username', { username: 123, password: PASSWORD }, /username/],
      ['a number as password', { username: 'u-num', password: 12345678 }, /password/],
      [
        'a boolean display_name',
        { username: 'u-b', password: PASSWORD, display_name: true },
        /display_name/,
      ],
      ['an array body', [], /body/],
    ])('register refuses %s', async (_label, body, message) => {
      expectValidation(await register(body), message);
    });

    it('refuses malformed JSON', async () => {
      expectValidation(await raw('/v1/register', 'application/json', '{"username": "a'));
    });

    it('refuses a JSON string as body', async () => {
      expectValidation(await raw('/v1/register', 'application/json', '"alice"'), /body/);
    });

    it('refuses an empty JSON body', async () => {
      expectValidation(await raw('/v1/register', 'application/json', ''));
    });

    it.each(['text/plain', 'application/xml', 'application/x-www-form-urlencoded'])(
      'refuses content type %s',
      async (type) => {
        const username = uniqueName();
        const payload =
          type === 'application/x-www-form-urlencoded'
            ? `username=${username}&password=${encodeURIComponent(PASSWORD)}`
            : JSON.stringify({ username, password: PASSWORD });
        expectValidation(await raw('/v1/register', type, payload));
        expect(await t.deps.store.findIdentityByUsername(username)).toBeUndefined();
      },
    );

    it('refuses a body over 64 KiB and accepts one just under', async () => {
      const over = JSON.stringify({ username: 'big', password: 'x'.repeat(64 * 1024) });
      expectValidation(await raw('/v1/register', 'application/json', over));
      const identity = await createIdentity(t);
      const under = JSON.stringify({ display_name: 'x'.repeat(100), pad: 'y'.repeat(60_000) });
      // Under the limit the schema decides: an unknown field, not the size.
      expectValidation(
        await t.inject({
          method: 'PATCH',
          url: `/v1/identities/${identity.id}/profile`,
          headers: { authorization: `Bearer ${all}`, 'content-type': 'application/json' },
          payload: under,
        }),
        /unknown field pad/,
      );
    });

    it.each([
      ['a too long display_name', { display_name: 'x'.repeat(129) }, /display_name/],
      ['a blank display_name', { display_name: '   ' }, /display_name/],
      ['a relative avatar_url', { avatar_url: '/me.png' }, /avatar_url/],
      ['a javascript: avatar_url', { avatar_url: 'javascript:alert(1)' }, /avatar_url/],
      [
        'an avatar_url over 2048',
        { avatar_url: `https://x.example/${'a'.repeat(2048)}` },
        /avatar_url/,
      ],
      ['a numeric avatar_url', { avatar_url: 7 }, /avatar_url/],
    ])('register and profile PATCH refuse %s', async (_label, fields, message) => {
      expectValidation(
        await register({ username: uniqueName(), password: PASSWORD, ...fields }),
        message,
      );
      const identity = await createIdentity(t);
      const patch = await t.call('PATCH', `/v1/identities/${identity.id}/profile`, all, fields);
      expectValidation(patch, message);
      expect((await t.deps.store.findIdentityById(identity.id))!.display_name).toBe(
        identity.display_name,
      );
    });

    it('profile PATCH refuses an unknown field (username is not patchable)', async () => {
      const identity = await createIdentity(t);
      for (const url of [
        `/v1/identities/${identity.id}/profile`,
        `/v1/identities/${identity.id}`,
      ]) {
        const res = await t.call('PATCH', url, all, { username: 'renamed' });
        expectValidation(res, /unknown field username/);
      }
      expect((await t.deps.store.findIdentityById(identity.id))!.username).toBe(identity.username);
    });
  });

  describe('sessions', () => {
    it('verify refuses a missing or non-string token', async () => {
      expectValidation(await t.call('POST', '/v1/sessions/verify', all, {}), /token/);
      expectValidation(await t.call('POST', '/v1/sessions/verify', all, { token: 5 }), /token/);
    });

    it('revoke refuses both, neither, or a non-UUID session_id', async () => {
      const id = '01890000-0000-7000-8000-000000000000';
      const token = `tess_s_${'a'.repeat(43)}`;
      const message = 'give exactly one of session_id or token';
      const revoke = (body: unknown) => t.call('POST', '/v1/sessions/revoke', all, body);
      expectValidation(await revoke({ session_id: id, token }), message);
      expectValidation(await revoke({}), message);
      expectValidation(await revoke({ session_id: 'abc' }), /session_id/);
      expectValidation(await revoke({ token: 5 }), /token/);
    });
  });

  it('lookup without ?username= is 422', async () => {
    expectValidation(await t.call('GET', '/v1/identities', all), /username/);
  });

  it('never leaks a stack trace or driver message on bad input', async () => {
    const res = await raw(
      '/v1/register',
      'application/json',
      '{"username": ["x"], "password": {}}',
    );
    expectValidation(res);
    expect(res.body).not.toMatch(/at |Error:|sqlite|postgres/i);
  });
});
