import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  auditEntries,
  auditSince,
  createIdentity,
  expectError,
  expectValidation,
  PASSWORD,
  uniqueName,
} from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';

/** SPEC.md 2.1, 4.1-4.3 and API-DECISIONS 2 (register). */
describeEachDatabase('identities', (kind) => {
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

  describe('POST /v1/register', () => {
    it('creates an identity: 201 with exactly the Identity fields', async () => {
      const res = await t.call('POST', '/v1/register', direct, {
        username: 'Dora.Explorer',
        password: PASSWORD,
        display_name: '  Dora  ',
        avatar_url: 'https://img.example/dora.png',
      });
      expect(res.statusCode).toBe(201);
      const now = new Date(t.clock.now()).toISOString();
      expect(res.json()).toEqual({
        id: expect.stringMatching(UUID),
        username: 'dora.explorer',
        display_name: 'Dora',
        avatar_url: 'https://img.example/dora.png',
        email: null,
        email_verified: false,
        state: 'active',
        created_at: now,
        updated_at: now,
      });
      const stored = await t.deps.store.findIdentityById(res.json().id);
      expect(stored?.password_hash).toMatch(/^\$argon2id\$/);
      expect(stored?.password_hash).not.toContain(PASSWORD);
    });

    it('defaults display_name to the username and avatar_url to null', async () => {
      const res = await t.call('POST', '/v1/register', direct, {
        username: 'Eve',
        password: PASSWORD,
      });
      expect(res.json()).toMatchObject({ username: 'eve', display_name: 'eve', avatar_url: null });
    });

    it('answers 409 username_taken for a taken name in any case, storing nothing', async () => {
      const first = await createIdentity(t, 'frank');
      const res = await t.call('POST', '/v1/register', direct, {
        username: 'FRANK',
        password: 'another password',
      });
      expectError(res, 409, 'username_taken');
      expect((await t.deps.store.findIdentityByUsername('frank'))?.id).toBe(first.id);
    });

    it('register-and-authenticate creates the identity and a password session', async () => {
      const res = await t.call('POST', '/v1/register-and-authenticate', direct, {
        username: 'Gina',
        password: PASSWORD,
      });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['session', 'token']);
      expect(body.token).toMatch(/^tess_s_[A-Za-z0-9_-]{43}$/);
      expect(body.session).toEqual({
        id: expect.stringMatching(UUID),
        identity: expect.objectContaining({ username: 'gina', state: 'active' }),
        issued_at: new Date(t.clock.now()).toISOString(),
        expires_at: new Date(t.clock.now() + 72 * 3_600_000).toISOString(),
        authenticated_via: 'password',
        aal: 'aal1',
      });
      const introspect = await t.token('introspect');
      const verified = await t.call('POST', '/v1/sessions/verify', introspect, {
        token: body.token,
      });
      expect(verified.json()).toEqual(body.session);
    });

    it('register-and-authenticate answers 409 for a taken name and mints no session', async () => {
      const hank = await createIdentity(t, 'hank');
      const before = (await auditEntries(t)).length;
      const res = await t.call('POST', '/v1/register-and-authenticate', direct, {
        username: 'hank',
        password: PASSWORD,
      });
      expectError(res, 409, 'username_taken');
      expect(await auditSince(t, before)).toEqual([
        expect.objectContaining({
          action: 'identity_register_and_authenticate',
          outcome: 'username_taken',
        }),
      ]);
      expect(await t.deps.store.revokeIdentitySessions(hank.id, t.clock.now())).toBe(0);
    });
  });

  describe('GET /v1/identities/{id}', () => {
    it('answers 200 with the identity', async () => {
      const identity = await createIdentity(t);
      const res = await t.call('GET', `/v1/identities/${identity.id}`, read);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(identity);
    });

    it.each([UNKNOWN_ID, 'not-a-uuid', UNKNOWN_ID.toUpperCase()])(
      'answers 404 not_found for %s',
      async (id) => {
        expectError(await t.call('GET', `/v1/identities/${id}`, read), 404, 'not_found');
      },
    );
  });

  describe('GET /v1/identities?username=', () => {
    it('finds by username case-insensitively and audits the queried name', async () => {
      const identity = await createIdentity(t, 'ivy.lookup');
      const before = (await auditEntries(t)).length;
      const res = await t.call('GET', '/v1/identities?username=IVY.Lookup', read);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual(identity);
      expect(await auditSince(t, before)).toEqual([
        expect.objectContaining({
          action: 'identity_lookup',
          service_name: expect.any(String),
          service_id: expect.stringMatching(UUID),
          target_identity: identity.id,
          outcome: 'ok',
          details: expect.objectContaining({ username: 'IVY.Lookup' }),
        }),
      ]);
    });

    it.each(['nobody-by-that-name', 'x', '%20bad%20name'])(
      'answers 404 for %s and still audits the queried name',
      async (username) => {
        const before = (await auditEntries(t)).length;
        const res = await t.call('GET', `/v1/identities?username=${username}`, read);
        expectError(res, 404, 'not_found');
        expect(await auditSince(t, before)).toEqual([
          expect.objectContaining({
            action: 'identity_lookup',
            target_identity: null,
            outcome: 'not_found',
            details: expect.objectContaining({ username: decodeURIComponent(username) }),
          }),
        ]);
      },
    );
  });

  describe('PATCH /v1/identities/{id}/profile', () => {
    it.each(['/profile', ''])(
      'applies only the fields present (path suffix "%s")',
      async (suffix) => {
        const identity = await createIdentity(t);
        await t.call('PATCH', `/v1/identities/${identity.id}${suffix}`, write, {
          avatar_url: 'https://img.example/a.png',
        });
        t.clock.advance(60_000);
        const res = await t.call('PATCH', `/v1/identities/${identity.id}${suffix}`, write, {
          display_name: 'Renamed',
        });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({
          ...identity,
          display_name: 'Renamed',
          avatar_url: 'https://img.example/a.png',
          updated_at: new Date(t.clock.now()).toISOString(),
        });
        const read1 = await t.call('GET', `/v1/identities/${identity.id}`, read);
        expect(read1.json()).toEqual(res.json());
      },
    );

    it('changes updated_at on every successful update, even an empty one', async () => {
      const identity = await createIdentity(t);
      t.clock.advance(1000);
      const res = await t.call('PATCH', `/v1/identities/${identity.id}/profile`, write, {});
      expect(res.statusCode).toBe(200);
      expect(res.json().updated_at).toBe(new Date(t.clock.now()).toISOString());
      expect(res.json().created_at).toBe(identity.created_at);
    });

    it('avatar_url null clears the avatar', async () => {
      const identity = await createIdentity(t);
      const url = `/v1/identities/${identity.id}/profile`;
      await t.call('PATCH', url, write, { avatar_url: 'http://img.example/b.png' });
      const res = await t.call('PATCH', url, write, { avatar_url: null });
      expect(res.json()).toMatchObject({ avatar_url: null, display_name: identity.display_name });
      expect((await t.deps.store.findIdentityById(identity.id))?.avatar_url).toBeNull();
    });

    it('a bad avatar URL is 422 and changes nothing', async () => {
      const identity = await createIdentity(t);
      const res = await t.call('PATCH', `/v1/identities/${identity.id}/profile`, write, {
        display_name: 'Should Not Stick',
        avatar_url: 'not a url',
      });
      expectValidation(res, /avatar_url/);
      expect(await t.deps.store.findIdentityById(identity.id)).toMatchObject({
        display_name: identity.display_name,
        avatar_url: null,
      });
    });

    it.each([UNKNOWN_ID, 'not-a-uuid'])('answers 404 for unknown id %s', async (id) => {
      const res = await t.call('PATCH', `/v1/identities/${id}/profile`, write, {
        display_name: 'X',
      });
      expectError(res, 404, 'not_found');
    });

    it('writes its audit row in the transaction (present without a flush)', async () => {
      const identity = await createIdentity(t, uniqueName('audited'));
      const res = await t.call('PATCH', `/v1/identities/${identity.id}`, write, {
        display_name: 'Audited',
      });
      expect(res.statusCode).toBe(200);
      const rows = (await t.deps.store.listAuditRecords(5)).filter(
        (row) => row.action === 'identity_update' && row.target_identity === identity.id,
      );
      expect(rows).toHaveLength(1);
      expect(JSON.parse(rows[0]!.details)).toEqual({ fields: ['display_name'] });
    });
  });
});
