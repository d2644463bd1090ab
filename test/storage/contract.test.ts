import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditFilter } from '../../src/domain/audit/audit.js';
import type { IdentityRecord } from '../../src/domain/identities/identity.js';
import { UniqueViolation } from '../../src/storage/errors.js';
import { newId } from '../../src/lib/ids.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import {
  auditRow,
  flowRow,
  identityRow,
  linkRow,
  serviceTokenRow,
  sessionRow,
  stored,
  T0,
  unmarked,
} from '../helpers/records.js';

const HOUR = 3_600_000;

/** One contract, both adapters: every method of the core store interfaces, on StoreHandle. */
describeEachDatabase('store contract', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  it('reports its dialect and answers ping', async () => {
    expect(store.dialect).toBe(kind);
    await expect(store.ping()).resolves.toBeUndefined();
  });

  describe('identities', () => {
    it('inserts and finds by id and by username, round-tripping every field', async () => {
      const row = identityRow({ avatar_url: 'https://img.example/a.png', created_at: T0 + 1 });
      await store.insertIdentity(row);
      expect(await store.findIdentityById(row.id)).toEqual(row);
      expect(await store.findIdentityByUsername(row.username)).toEqual(row);
      expect(await store.findIdentityById(identityRow().id)).toBeUndefined();
      expect(await store.findIdentityByUsername('nobody')).toBeUndefined();
    });

    it('translates a duplicate username into UniqueViolation, storing nothing', async () => {
      const first = identityRow();
      await store.insertIdentity(first);
      const second = identityRow({ username: first.username });
      const error = await store.insertIdentity(second).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UniqueViolation);
      expect((error as Error).message).toBe('unique constraint violated');
      expect(await store.findIdentityById(second.id)).toBeUndefined();
    });

    it('updates only the fields of a profile patch, and updated_at', async () => {
      const row = identityRow({ avatar_url: 'https://img.example/a.png' });
      await store.insertIdentity(row);
      const renamed = await store.updateIdentityProfile(row.id, { display_name: 'B' }, T0 + 5);
      expect(renamed).toEqual({ ...row, display_name: 'B', updated_at: T0 + 5 });
      const cleared = await store.updateIdentityProfile(row.id, { avatar_url: null }, T0 + 6);
      expect(cleared).toEqual({ ...row, display_name: 'B', avatar_url: null, updated_at: T0 + 6 });
      expect(await store.findIdentityById(row.id)).toEqual(cleared);
      expect(await store.updateIdentityProfile(identityRow().id, {}, T0)).toBeUndefined();
    });

    it('sets the state and answers undefined for an unknown id', async () => {
      const row = identityRow();
      await store.insertIdentity(row);
      const disabled = await store.setIdentityState(row.id, 'disabled', T0 + 7);
      expect(disabled).toEqual({ ...row, state: 'disabled', updated_at: T0 + 7 });
      expect((await store.setIdentityState(row.id, 'active', T0 + 8))?.state).toBe('active');
      expect(await store.setIdentityState(identityRow().id, 'disabled', T0)).toBeUndefined();
    });

    it('sets, finds by and clears an email; a taken one is UniqueViolation; NULLs never collide', async () => {
      const row = identityRow();
      await store.insertIdentity(row);
      const other = identityRow();
      await store.insertIdentity(other);
      const email = `${row.username}@example.com`;
      const set = await store.setIdentityEmail(row.id, email, T0 + 3, T0 + 4);
      expect(set).toEqual({ ...row, email, email_verified_at: T0 + 3, updated_at: T0 + 4 });
      expect(await store.findIdentityByEmail(email)).toEqual(set);
      expect(await store.findIdentityByEmail(`x${email}`)).toBeUndefined();
      const error = await store
        .setIdentityEmail(other.id, email, null, T0 + 5)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UniqueViolation);
      const taken = identityRow({ email });
      expect(await store.insertIdentity(taken).catch((caught: unknown) => caught)).toBeInstanceOf(
        UniqueViolation,
      );
      expect(await store.findIdentityById(other.id)).toEqual(other);
      const cleared = await store.setIdentityEmail(row.id, null, null, T0 + 6);
      expect(cleared).toMatchObject({ email: null, email_verified_at: null });
      expect(await store.setIdentityEmail(other.id, email, null, T0 + 7)).toMatchObject({ email });
      expect(await store.setIdentityEmail(identityRow().id, null, null, T0)).toBeUndefined();
    });

    it('sets the password hash and updated_at only; undefined for an unknown id', async () => {
      const row = identityRow({ display_name: 'Keeps' });
      await store.insertIdentity(row);
      const changed = await store.setIdentityPassword(row.id, '$argon2id$new', T0 + 9);
      expect(changed).toEqual({ ...row, password_hash: '$argon2id$new', updated_at: T0 + 9 });
      expect(await store.findIdentityById(row.id)).toEqual(changed);
      expect(await store.setIdentityPassword(identityRow().id, 'x', T0)).toBeUndefined();
    });

    it('lists newest first (created_at, then id), by state, up to the limit, without hashes', async () => {
      // Far in the future, so rows of the other tests stay behind these three.
      const at = T0 + 1000 * HOUR;
      const older = identityRow({ created_at: at });
      const tieLow = identityRow({ created_at: at + 1 });
      const tieHigh = identityRow({ created_at: at + 1, state: 'disabled' });
      expect(tieLow.id < tieHigh.id).toBe(true); // time-ordered ids
      for (const row of [tieLow, older, tieHigh]) await store.insertIdentity(row);
      const summary = ({ password_hash: _hash, ...rest }: IdentityRecord) => rest;
      expect(await store.listIdentities({ limit: 3 })).toEqual(
        [tieHigh, tieLow, older].map(summary),
      );
      expect(await store.listIdentities({ limit: 1 })).toEqual([summary(tieHigh)]);
      expect(await store.listIdentities({ state: 'active', limit: 2 })).toEqual(
        [tieLow, older].map(summary),
      );
      const disabled = await store.listIdentities({ state: 'disabled', limit: 10_000 });
      expect(disabled[0]).toEqual(summary(tieHigh));
      expect(disabled.every((row) => row.state === 'disabled')).toBe(true);
    });
  });

  describe('sessions', () => {
    it('inserts, finds by id, and by token hash joined with its identity', async () => {
      const identity = identityRow();
      await store.insertIdentity(identity);
      const session = sessionRow(identity.id, { authenticated_via: 'link' });
      await store.insertSession(stored(session));
      // Neither read returns the token's format (checked before any lookup); the hot path
      // does not read the password hash either.
      expect(await store.findSessionById(session.id)).toEqual(unmarked(stored(session)));
      const found = await store.findSessionByTokenHash(session.token_hash);
      expect(found?.session).toEqual(unmarked(stored(session)));
      expect(found?.identity).toEqual({ ...identity, password_hash: null });
      expect(await store.findSessionByTokenHash('unknown-hash')).toBeUndefined();
      expect(await store.findSessionById(identityRow().id)).toBeUndefined();
    });

    it('reads a caller and a session together as the two reads alone, found or not', async () => {
      const identity = identityRow();
      await store.insertIdentity(identity);
      const session = sessionRow(identity.id);
      await store.insertSession(stored(session));
      const caller = serviceTokenRow();
      await store.insertServiceToken(caller);
      const apart = async (tokenHash: string, sessionHash: string) => ({
        serviceToken: await store.findServiceTokenByHash(tokenHash),
        found: await store.findSessionByTokenHash(sessionHash),
      });
      for (const [tokenHash, sessionHash] of [
        [caller.token_hash, session.token_hash],
        [caller.token_hash, 'unknown-hash'],
        ['unknown-hash', session.token_hash],
        ['unknown-hash', 'unknown-hash'],
      ] as const) {
        const together = await store.findCallerAndSession(tokenHash, sessionHash);
        expect(together).toEqual(await apart(tokenHash, sessionHash));
      }
      const both = await store.findCallerAndSession(caller.token_hash, session.token_hash);
      expect(both.serviceToken).toEqual(caller);
      expect(both.found?.identity).toEqual({ ...identity, password_hash: null });
    });

    it('findCallerAndIdentity answers what the two reads answer apart', async () => {
      const identity = identityRow({ email: `${newId()}@example.com` });
      await store.insertIdentity(identity);
      const caller = serviceTokenRow();
      await store.insertServiceToken(caller);
      const unknown = identityRow({ email: `${newId()}@example.com` });
      for (const tokenHash of [caller.token_hash, 'unknown-hash']) {
        for (const { id, username, email } of [identity, unknown]) {
          expect(await store.findCallerAndIdentity(tokenHash, 'id', id)).toEqual({
            serviceToken: await store.findServiceTokenByHash(tokenHash),
            identity: await store.findIdentityById(id),
          });
          expect(await store.findCallerAndIdentity(tokenHash, 'username', username)).toEqual({
            serviceToken: await store.findServiceTokenByHash(tokenHash),
            identity: await store.findIdentityByUsername(username),
          });
          expect(await store.findCallerAndIdentity(tokenHash, 'email', email!)).toEqual({
            serviceToken: await store.findServiceTokenByHash(tokenHash),
            identity: await store.findIdentityByEmail(email!),
          });
        }
      }
      const both = await store.findCallerAndIdentity(caller.token_hash, 'id', identity.id);
      expect(both).toEqual({ serviceToken: caller, identity });
      expect(
        await store.findCallerAndIdentity(caller.token_hash, 'username', identity.username),
      ).toEqual(both);
      expect(
        await store.findCallerAndIdentity(caller.token_hash, 'email', identity.email!),
      ).toEqual(both);
      const inside = await store.transaction(async (tx) => [
        await tx.findCallerAndIdentity(caller.token_hash, 'id', identity.id),
        await tx.findCallerAndIdentity(caller.token_hash, 'username', identity.username),
        await tx.findCallerAndIdentity(caller.token_hash, 'email', identity.email!),
      ]);
      expect(inside).toEqual([both, both, both]);
    });

    it('inside a transaction: inserts a session, and a duplicate token hash is UniqueViolation', async () => {
      const identity = identityRow();
      await store.insertIdentity(identity);
      const session = sessionRow(identity.id);
      await store.transaction((tx) => tx.insertSession(stored(session)));
      expect(await store.findSessionById(session.id)).toEqual(unmarked(stored(session)));
      const again = stored(sessionRow(identity.id, { token_hash: session.token_hash }));
      await expect(store.transaction((tx) => tx.insertSession(again))).rejects.toBeInstanceOf(
        UniqueViolation,
      );
      expect(await store.findSessionById(again.id)).toBeUndefined();
    });

    it('translates a duplicate token hash into UniqueViolation', async () => {
      const identity = identityRow();
      await store.insertIdentity(identity);
      const session = sessionRow(identity.id);
      await store.insertSession(stored(session));
      const again = stored(sessionRow(identity.id, { token_hash: session.token_hash }));
      await expect(store.insertSession(again)).rejects.toBeInstanceOf(UniqueViolation);
    });

    it('revokes by id once, keeping the first time; false for an unknown id', async () => {
      const identity = identityRow();
      await store.insertIdentity(identity);
      const session = sessionRow(identity.id);
      await store.insertSession(stored(session));
      expect(await store.revokeSessionById(session.id, T0 + 1)).toBe(true);
      expect(await store.revokeSessionById(session.id, T0 + 2)).toBe(true);
      expect((await store.findSessionById(session.id))?.revoked_at).toBe(T0 + 1);
      expect(await store.revokeSessionById(identityRow().id, T0)).toBe(false);
    });

    it('revokes by token hash once; an unknown hash is a no-op', async () => {
      const identity = identityRow();
      await store.insertIdentity(identity);
      const session = sessionRow(identity.id);
      await store.insertSession(stored(session));
      await store.revokeSessionByTokenHash(session.token_hash, T0 + 3);
      await store.revokeSessionByTokenHash(session.token_hash, T0 + 4);
      await store.revokeSessionByTokenHash('unknown-hash', T0 + 4);
      expect((await store.findSessionById(session.id))?.revoked_at).toBe(T0 + 3);
    });

    it('revokes every live session of one identity and counts only those', async () => {
      const [identity, other] = [identityRow(), identityRow()];
      await store.insertIdentity(identity);
      await store.insertIdentity(other);
      const now = T0 + HOUR / 2;
      const live = [sessionRow(identity.id), sessionRow(identity.id)];
      const expired = sessionRow(identity.id, { expires_at: now });
      const revoked = sessionRow(identity.id, { revoked_at: T0 });
      const foreign = sessionRow(other.id);
      for (const row of [...live, expired, revoked, foreign])
        await store.insertSession(stored(row));
      expect(await store.revokeIdentitySessions(identity.id, now)).toBe(2);
      expect(await store.revokeIdentitySessions(identity.id, now)).toBe(0);
      for (const row of live) expect((await store.findSessionById(row.id))?.revoked_at).toBe(now);
      expect((await store.findSessionById(expired.id))?.revoked_at).toBeNull();
      expect((await store.findSessionById(revoked.id))?.revoked_at).toBe(T0);
      expect((await store.findSessionById(foreign.id))?.revoked_at).toBeNull();
    });

    it('deletes sessions at or past expiry, revoked or not, and no others', async () => {
      const identity = identityRow();
      await store.insertIdentity(identity);
      const far = 100 * HOUR;
      const due = sessionRow(identity.id, { expires_at: T0 + far });
      const dueRevoked = sessionRow(identity.id, { expires_at: T0 + far - 1, revoked_at: T0 });
      const notYet = sessionRow(identity.id, { expires_at: T0 + far + 1, revoked_at: T0 });
      for (const row of [due, dueRevoked, notYet]) await store.insertSession(stored(row));
      expect(await store.deleteExpiredSessions(T0 + far)).toBeGreaterThanOrEqual(2);
      expect(await store.findSessionById(due.id)).toBeUndefined();
      expect(await store.findSessionById(dueRevoked.id)).toBeUndefined();
      expect(await store.findSessionById(notYet.id)).toBeDefined();
      expect(await store.deleteExpiredSessions(T0 + far)).toBe(0);
    });
  });

  describe('service tokens', () => {
    it('inserts, finds by hash, id and name, lists oldest first, and revokes once', async () => {
      const first = serviceTokenRow({ created_at: T0 - 2 * HOUR });
      const second = serviceTokenRow({ created_at: T0 - HOUR });
      await store.insertServiceToken(second);
      await store.insertServiceToken(first);
      expect(await store.findServiceTokenByHash(first.token_hash)).toEqual(first);
      expect(await store.findServiceTokenByIdOrName(first.id)).toEqual(first);
      expect(await store.findServiceTokenByIdOrName(first.name)).toEqual(first);
      expect(await store.findServiceTokenByIdOrName('no-such-service')).toBeUndefined();
      expect(await store.findServiceTokenByHash('unknown')).toBeUndefined();
      const listed = (await store.listServiceTokens()).filter((row) =>
        [first.id, second.id].includes(row.id),
      );
      expect(listed).toEqual([first, second]);
      await store.revokeServiceToken(first.id, T0 + 1);
      await store.revokeServiceToken(first.id, T0 + 2);
      expect((await store.findServiceTokenByHash(first.token_hash))?.revoked_at).toBe(T0 + 1);
    });

    it('translates a duplicate name or token hash into UniqueViolation', async () => {
      const row = serviceTokenRow();
      await store.insertServiceToken(row);
      const sameName = serviceTokenRow({ name: row.name });
      const sameHash = serviceTokenRow({ token_hash: row.token_hash });
      await expect(store.insertServiceToken(sameName)).rejects.toBeInstanceOf(UniqueViolation);
      await expect(store.insertServiceToken(sameHash)).rejects.toBeInstanceOf(UniqueViolation);
    });
  });

  describe('audit log', () => {
    it('inserts a batch and lists newest first up to the limit', async () => {
      const rows = [1, 2, 3].map((i) =>
        auditRow({ at: T0 + i, details: JSON.stringify({ i }), target_identity: null }),
      );
      await store.insertAuditRecords(rows);
      await store.insertAuditRecords([]);
      const latest = await store.listAuditRecords(3);
      expect(latest).toEqual([rows[2], rows[1], rows[0]]);
      expect(await store.listAuditRecords(1)).toEqual([rows[2]]);
    });

    it('filters by actions, target identity and a half-open time range, newest first', async () => {
      // Far in the past, so rows of the other tests never fall inside the range.
      const base = T0 - 1000 * HOUR;
      const target = identityRow().id;
      const rows = [
        auditRow({ at: base, action: 'flow_password', target_identity: target }),
        auditRow({ at: base + 1, action: 'identity_read', target_identity: target }),
        auditRow({ at: base + 2, action: 'flow_password', target_identity: null }),
        auditRow({ at: base + 2, action: 'flow_password', target_identity: target }),
        auditRow({ at: base + 3, action: 'sweep', target_identity: null }),
      ];
      expect(rows[2]!.id < rows[3]!.id).toBe(true); // time-ordered ids break the tie
      await store.insertAuditRecords(rows);
      const range = { since: base, until: base + 4 };
      const list = async (filter: AuditFilter, limit = 100) =>
        (await store.listAuditRecords(limit, filter)).map((row) =>
          rows.findIndex((candidate) => candidate.id === row.id),
        );
      expect(await list(range)).toEqual([4, 3, 2, 1, 0]);
      expect(await list({ ...range, actions: ['flow_password'] })).toEqual([3, 2, 0]);
      expect(await list({ ...range, actions: ['sweep', 'identity_read'] })).toEqual([4, 1]);
      expect(await list({ ...range, target_identity: target })).toEqual([3, 1, 0]);
      expect(await list({ since: base + 1, until: base + 3 })).toEqual([3, 2, 1]);
      const both = { ...range, actions: ['flow_password'], target_identity: target };
      expect(await list(both, 1)).toEqual([3]);
      expect(await list({ ...range, actions: [] })).toHaveLength(5);
      expect(await list({ ...range, actions: ['no_such_action'] })).toEqual([]);
      expect(await list({ ...range, target_identity: identityRow().id })).toEqual([]);
      const unbounded = await store.listAuditRecords(10_000, { since: base - 1 });
      expect(unbounded.map((row) => row.id)).toContain(rows[0]!.id);
    });

    it('is idempotent by id: a retried batch is not written twice', async () => {
      const row = auditRow({ at: T0 + 10 });
      await store.insertAuditRecords([row]);
      await store.insertAuditRecords([row, auditRow({ at: T0 + 11 })]);
      const all = await store.listAuditRecords(10_000);
      expect(all.filter((entry) => entry.id === row.id)).toEqual([row]);
    });
  });

  describe('rate limits', () => {
    it('counts hits in a fixed window and starts over when it ends', async () => {
      const key = `contract:${kind}`;
      expect(await store.hitRateLimit(key, 60_000, T0)).toEqual({
        count: 1,
        reset_at: T0 + 60_000,
      });
      expect(await store.hitRateLimit(key, 60_000, T0 + 59_999)).toEqual({
        count: 2,
        reset_at: T0 + 60_000,
      });
      expect(await store.hitRateLimit(key, 60_000, T0 + 60_000)).toEqual({
        count: 1,
        reset_at: T0 + 120_000,
      });
      expect(await store.deleteExpiredRateLimits(T0 + 119_999)).toBe(0);
      expect(await store.deleteExpiredRateLimits(T0 + 120_000)).toBeGreaterThanOrEqual(1);
      expect((await store.hitRateLimit(key, 60_000, T0 + 120_000)).count).toBe(1);
    });

    it('gives 50 concurrent hits 50 distinct counts', async () => {
      const key = `concurrent:${kind}`;
      const hits = await Promise.all(
        Array.from({ length: 50 }, () => store.hitRateLimit(key, HOUR, T0)),
      );
      const counts = hits.map((hit) => hit.count).sort((a, b) => a - b);
      expect(counts).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(new Set(hits.map((hit) => hit.reset_at))).toEqual(new Set([T0 + HOUR]));
    });

    it('hits several counters in order and stops after the first past its limit', async () => {
      const [a, b] = [`several-a:${kind}`, `several-b:${kind}`];
      const both = [
        { key: a, windowMs: 60_000, limit: 1 },
        { key: b, windowMs: HOUR, limit: 5 },
      ];
      expect(await store.hitRateLimits(both, T0)).toEqual([
        { count: 1, reset_at: T0 + 60_000 },
        { count: 1, reset_at: T0 + HOUR },
      ]);
      // `a` goes past its limit: `b` is not counted.
      expect(await store.hitRateLimits(both, T0 + 1)).toEqual([
        { count: 2, reset_at: T0 + 60_000 },
      ]);
      expect((await store.hitRateLimit(b, HOUR, T0 + 2)).count).toBe(2);
      // A new window for `a`: both counted again, each in its own window.
      expect(await store.hitRateLimits(both, T0 + 60_000)).toEqual([
        { count: 1, reset_at: T0 + 120_000 },
        { count: 3, reset_at: T0 + HOUR },
      ]);
      expect(await store.hitRateLimits([], T0)).toEqual([]);
    });

    it('counts a key listed twice twice, as one by one', async () => {
      const key = `twice:${kind}`;
      const twice = [
        { key, windowMs: HOUR, limit: 2 },
        { key, windowMs: HOUR, limit: 2 },
      ];
      expect(await store.hitRateLimits(twice, T0)).toEqual([
        { count: 1, reset_at: T0 + HOUR },
        { count: 2, reset_at: T0 + HOUR },
      ]);
      expect(await store.hitRateLimits(twice, T0)).toEqual([{ count: 3, reset_at: T0 + HOUR }]);
    });

    it('gives concurrent multi-counter hits distinct counts on each counter', async () => {
      const counts = [
        { key: `multi-a:${kind}`, windowMs: HOUR, limit: 1_000 },
        { key: `multi-b:${kind}`, windowMs: HOUR, limit: 1_000 },
      ];
      const hits = await Promise.all(
        Array.from({ length: 30 }, () => store.hitRateLimits(counts, T0)),
      );
      for (const i of [0, 1]) {
        const seen = hits.map((pair) => pair[i]!.count).sort((x, y) => x - y);
        expect(seen).toEqual(Array.from({ length: 30 }, (_, n) => n + 1));
      }
    });
  });

  describe('flows and links (basic)', () => {
    it('inserts and finds a flow', async () => {
      const flow = flowRow({ return_to: 'https://app.example/' });
      await store.insertFlow(flow);
      expect(await store.findFlow(flow.id)).toEqual(flow);
      expect(await store.findFlow(flowRow().id)).toBeUndefined();
    });

    it('completes a flow once, inside a transaction, only from its state and before expiry', async () => {
      const flow = flowRow();
      await store.insertFlow(flow);
      expect(await store.transaction((tx) => tx.completeFlow(flow.id, flow.expires_at))).toBe(
        false,
      );
      expect(
        await store.transaction((tx) => tx.completeFlow(flow.id, T0, 'second_factor_required')),
      ).toBe(false);
      expect(await store.transaction((tx) => tx.completeFlow(flow.id, T0))).toBe(true);
      expect(await store.transaction((tx) => tx.completeFlow(flow.id, T0))).toBe(false);
      expect((await store.findFlow(flow.id))?.state).toBe('completed');
    });

    it('inserts and finds a link; a second owner of the pair is UniqueViolation', async () => {
      const [a, b] = [identityRow(), identityRow()];
      await store.insertIdentity(a);
      await store.insertIdentity(b);
      const link = linkRow(a.id);
      await store.insertLink(link);
      expect(await store.findLink(link.provider, link.subject)).toEqual(link);
      await expect(store.insertLink({ ...link, identity_id: b.id })).rejects.toBeInstanceOf(
        UniqueViolation,
      );
    });
  });
});
