import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  auditSince,
  auditEntries,
  createIdentity,
  expectError,
  expectValidation,
  PASSWORD,
  uniqueName,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';

/** API-DECISIONS 7, "Email on identities"; docs/api.md, "Email addresses". */
describeEachDatabase('identity email addresses', (kind) => {
  let t: TestApp;
  let read: string;
  let write: string;
  let direct: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    read = await t.token('identity_read');
    write = await t.token('identity_write');
    direct = await t.token('direct_auth');
  });
  afterAll(() => t?.close());

  const address = (name = uniqueName()) => `${name}@example.com`;
  const setEmail = (id: string, body: unknown) =>
    t.call('PUT', `/v1/identities/${id}/email`, write, body);
  const lookup = (email: string) =>
    t.call('GET', `/v1/identities?email=${encodeURIComponent(email)}`, read);

  describe('register', () => {
    it('stores the address trimmed and lowercased, unverified unless vouched for', async () => {
      const name = uniqueName();
      const res = await t.call('POST', '/v1/register', direct, {
        username: name,
        password: PASSWORD,
        email: `  ${name.toUpperCase()}@Example.COM `,
      });
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ email: `${name}@example.com`, email_verified: false });
      const stored = await t.deps.store.findIdentityById(res.json().id);
      expect(stored).toMatchObject({ email: `${name}@example.com`, email_verified_at: null });

      const vouched = await t.call('POST', '/v1/register', direct, {
        username: uniqueName(),
        password: PASSWORD,
        email: address(),
        email_verified: true,
      });
      expect(vouched.json()).toMatchObject({ email_verified: true });
    });

    it('without an address: email null and email_verified false; null is the same', async () => {
      for (const extra of [{}, { email: null }]) {
        const res = await t.call('POST', '/v1/register', direct, {
          username: uniqueName(),
          password: PASSWORD,
          ...extra,
        });
        expect(res.json()).toMatchObject({ email: null, email_verified: false });
      }
    });

    it('refuses email_verified without an address', async () => {
      const res = await t.call('POST', '/v1/register', direct, {
        username: uniqueName(),
        password: PASSWORD,
        email_verified: true,
      });
      expectValidation(res, 'email_verified needs an email');
    });

    it('register-and-authenticate: the session and every session check carry the address', async () => {
      const email = address();
      const res = await t.call('POST', '/v1/register-and-authenticate', direct, {
        username: uniqueName(),
        password: PASSWORD,
        email,
        email_verified: true,
      });
      expect(res.statusCode).toBe(201);
      expect(res.json().session.identity).toMatchObject({ email, email_verified: true });
      const introspect = await t.token('introspect');
      const verified = await t.call('POST', '/v1/sessions/verify', introspect, {
        token: res.json().token,
      });
      expect(verified.json().identity).toMatchObject({ email, email_verified: true });
    });

    it('a taken address in another case is 409 email_taken; a taken username stays username_taken', async () => {
      const email = address();
      const first = await t.call('POST', '/v1/register', direct, {
        username: uniqueName(),
        password: PASSWORD,
        email,
      });
      const before = (await auditEntries(t)).length;
      const again = await t.call('POST', '/v1/register', direct, {
        username: uniqueName(),
        password: PASSWORD,
        email: email.toUpperCase(),
      });
      expectError(again, 409, 'email_taken');
      const andSignIn = await t.call('POST', '/v1/register-and-authenticate', direct, {
        username: uniqueName(),
        password: PASSWORD,
        email,
      });
      expectError(andSignIn, 409, 'email_taken');
      const sameName = await t.call('POST', '/v1/register', direct, {
        username: first.json().username,
        password: PASSWORD,
        email: address(),
      });
      expectError(sameName, 409, 'username_taken');
      const bothTaken = await t.call('POST', '/v1/register', direct, {
        username: first.json().username,
        password: PASSWORD,
        email,
      });
      expectError(bothTaken, 409, 'email_taken');
      // Nothing of the refused registrations was stored.
      expect((await lookup(email)).json().id).toBe(first.json().id);
      const registered = (await auditSince(t, before)).filter(
        (row) => row.action.startsWith('identity_register') && row.outcome === 'ok',
      );
      expect(registered).toEqual([]);
    });
  });

  describe('GET /v1/identities?email=', () => {
    it('finds the identity by its address in any case and any spelling of its domain', async () => {
      const identity = await createIdentity(t);
      const set = await setEmail(identity.id, { email: `${identity.username}@bücher.example` });
      expect(set.json().email).toBe(`${identity.username}@xn--bcher-kva.example`);
      for (const spelling of [
        `${identity.username}@bücher.example`,
        `${identity.username.toUpperCase()}@BÜCHER.example`,
        `${identity.username}@xn--bcher-kva.example`,
      ]) {
        const res = await lookup(spelling);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual(set.json());
      }
    });

    it('404 for an unknown address and for text that cannot be one', async () => {
      expectError(await lookup(address()), 404, 'not_found');
      expectError(await lookup('not an address'), 404, 'not_found');
      expectError(await lookup('a@b@example.com'), 404, 'not_found');
    });

    it('needs exactly one of username and email', async () => {
      expectValidation(
        await t.call('GET', '/v1/identities', read),
        'give exactly one of username and email',
      );
      expectValidation(
        await t.call('GET', '/v1/identities?username=someone&email=a%40example.com', read),
        'give exactly one of username and email',
      );
    });

    it('is audited as identity_lookup without the address', async () => {
      const identity = await createIdentity(t);
      const email = address(identity.username);
      await setEmail(identity.id, { email });
      const before = (await auditEntries(t)).length;
      await lookup(email);
      const rows = await auditSince(t, before);
      expect(rows).toEqual([
        expect.objectContaining({
          action: 'identity_lookup',
          target_identity: identity.id,
          details: { by: 'email', method: 'GET', path: '/v1/identities' },
        }),
      ]);
      expect(JSON.stringify(rows)).not.toContain(email);
    });
  });

  describe('PUT /v1/identities/{id}/email', () => {
    it('sets, verifies, keeps, replaces and removes the address', async () => {
      const identity = await createIdentity(t);
      const email = address();
      t.clock.advance(1000);
      const set = await setEmail(identity.id, { email });
      expect(set.statusCode).toBe(200);
      expect(set.json()).toMatchObject({
        id: identity.id,
        email,
        email_verified: false,
        updated_at: new Date(t.clock.now()).toISOString(),
      });
      expect((await setEmail(identity.id, { email, verified: true })).json()).toMatchObject({
        email,
        email_verified: true,
      });
      // The same address again, in another case and without `verified`: still verified.
      expect((await setEmail(identity.id, { email: email.toUpperCase() })).json()).toMatchObject({
        email,
        email_verified: true,
      });
      expect((await setEmail(identity.id, { email, verified: false })).json()).toMatchObject({
        email_verified: false,
      });
      await setEmail(identity.id, { email, verified: true });
      const other = address();
      expect((await setEmail(identity.id, { email: other })).json()).toMatchObject({
        email: other,
        email_verified: false,
      });
      const removed = await setEmail(identity.id, { email: null });
      expect(removed.json()).toMatchObject({ email: null, email_verified: false });
      expect((await t.call('GET', `/v1/identities/${identity.id}`, read)).json()).toEqual(
        removed.json(),
      );
      expectError(await lookup(other), 404, 'not_found');
      // A removed address is free for another identity.
      const next = await createIdentity(t);
      expect((await setEmail(next.id, { email: other })).statusCode).toBe(200);
    });

    it("another identity's address, in any case, is 409 email_taken and changes nothing", async () => {
      const owner = await createIdentity(t);
      const email = address();
      await setEmail(owner.id, { email, verified: true });
      const other = await createIdentity(t);
      await setEmail(other.id, { email: address() });
      const before = (await t.call('GET', `/v1/identities/${other.id}`, read)).json();
      expectError(await setEmail(other.id, { email: email.toUpperCase() }), 409, 'email_taken');
      expect((await t.call('GET', `/v1/identities/${other.id}`, read)).json()).toEqual(before);
      expect((await lookup(email)).json()).toMatchObject({ id: owner.id, email_verified: true });
    });

    it('refuses verified without an address, unknown ids, and bodies off the schema', async () => {
      const identity = await createIdentity(t);
      expectValidation(await setEmail(identity.id, { email: null, verified: true }));
      expectError(await setEmail(UNKNOWN_ID, { email: address() }), 404, 'not_found');
      expectError(await setEmail(identity.username, { email: address() }), 404, 'not_found');
      expectValidation(await setEmail(identity.id, {}));
      expectValidation(await setEmail(identity.id, { email: address(), extra: 1 }));
      expectValidation(await setEmail(identity.id, { email: 42 }));
      expectValidation(await setEmail(identity.id, { email: address(), verified: 'yes' }));
    });

    it('needs identity_write: direct_auth and identity_read are forbidden', async () => {
      const identity = await createIdentity(t);
      for (const token of [direct, read]) {
        const res = await t.call('PUT', `/v1/identities/${identity.id}/email`, token, {
          email: address(),
        });
        expect(res.statusCode).toBe(403);
        expect(res.json().error).toBe('forbidden');
      }
    });

    it('is audited as identity_set_email, saying what changed but not the address', async () => {
      const identity = await createIdentity(t);
      const email = address();
      const before = (await auditEntries(t)).length;
      await setEmail(identity.id, { email });
      await setEmail(identity.id, { email, verified: true });
      await setEmail(identity.id, { email: null });
      const rows = (await auditSince(t, before)).filter(
        (row) => row.action === 'identity_set_email',
      );
      expect(rows.map((row) => [row.target_identity, row.outcome, row.details])).toEqual([
        [identity.id, 'ok', { email: 'changed', verified: false }],
        [identity.id, 'ok', { email: 'same', verified: true }],
        [identity.id, 'ok', { email: 'removed', verified: false }],
      ]);
      expect(JSON.stringify(rows)).not.toContain(email);
    });
  });

  describe('addresses refused', () => {
    const long = (n: number, c = 'a') => c.repeat(n);
    const cases: [string, unknown, RegExp][] = [
      ['no @', 'plainaddress', /^email must hold exactly one @ \(0 given\)$/],
      ['two @', 'a@b@example.com', /^email must hold exactly one @ \(2 given\)$/],
      ['quoted local part with @', '"a@b"@example.com', /exactly one @/],
      ['quoted local part', '"john doe"@example.com', /^email must be an address like/],
      ['empty local part', '@example.com', /^email must be an address like/],
      ['empty domain', 'a@', /^email has no valid domain name after the @$/],
      ['no top-level domain', 'a@localhost', /^email must be an address like/],
      ['IP literal', 'a@[127.0.0.1]', /^email has no valid domain name after the @$/],
      ['bare IP', 'a@127.0.0.1', /^email must be an address like/],
      ['double dot', 'a..b@example.com', /^email must be an address like/],
      ['leading dot', '.a@example.com', /^email must be an address like/],
      ['space inside', 'a b@example.com', /^email must be an address like/],
      ['hyphen-led label', 'a@-example.com', /^email must be an address like/],
      ['non-ASCII local part', 'josé@example.com', /^email must be ASCII before the @/],
      ['65 before the @', `${long(65)}@example.com`, /at most 64 before the @/],
      ['255 characters', `a@${long(63)}.${long(63)}.${long(63)}.${long(60)}.com`, /at most 254/],
      ['60,000 characters', `${long(60_000)}@example.com`, /at most 254/],
      ['invalid IDN label', 'a@xn--a.example', /^email has no valid domain name after the @$/],
      ['newline (header injection)', 'a@example.com\r\nBcc: x@example.com', /one line/],
      ['NUL', 'a\u0000@example.com', /one line/],
      ['bidi override', 'a\u202e@example.com', /one line/],
      ['unpaired surrogate', 'a\ud800@example.com', /one line/],
      ['empty', '', /exactly one @/],
    ];

    it.each(cases)('%s: 422 on register and PUT, nothing stored', async (_, email, message) => {
      const username = uniqueName();
      const res = await t.call('POST', '/v1/register', direct, {
        username,
        password: PASSWORD,
        email,
      });
      expectValidation(res, message);
      expect(await t.deps.store.findIdentityByUsername(username)).toBeUndefined();
      const identity = await createIdentity(t);
      expectValidation(await setEmail(identity.id, { email }), message);
      expect((await t.deps.store.findIdentityById(identity.id))?.email).toBeNull();
    });

    it('accepts what RFC 5321 and WHATWG allow: tags, symbols, IDN and long-but-legal', async () => {
      const local64 = long(64, 'b');
      const domain = `${long(63)}.${long(63)}.${long(63)}.${long(52)}.com`;
      const accepted: [string, string][] = [
        ["O'Hara+Tag@Example.IE", "o'hara+tag@example.ie"],
        ['x!#$%&*/=?^_`{|}~-y@example.com', 'x!#$%&*/=?^_`{|}~-y@example.com'],
        [`${local64}@example.com`, `${local64}@example.com`],
        [`a@${domain}`, `a@${domain}`],
        ['user@ＥＸＡＭＰＬＥ.com', 'user@example.com'],
        ['user@пример.рф', 'user@xn--e1afmkfd.xn--p1ai'],
      ];
      for (const [given, stored] of accepted) {
        const identity = await createIdentity(t);
        const res = await setEmail(identity.id, { email: given });
        expect({ given, status: res.statusCode, email: res.json().email }).toEqual({
          given,
          status: 200,
          email: stored,
        });
        expect(stored.length).toBeLessThanOrEqual(254);
      }
    });
  });
});
