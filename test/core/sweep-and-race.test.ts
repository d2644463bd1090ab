import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweep } from '../../src/domain/sweep.js';
import { newToken } from '../../src/lib/tokens.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, createSession, PASSWORD } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

const HOUR = 3_600_000;

describeEachDatabase('housekeeping sweep', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind, { SERVICE_SESSION_TTL_HOURS: '1' });
  });
  afterAll(() => t?.close());

  it('removes expired sessions, flows and counters; keeps revoked ones until expiry', async () => {
    const { store } = t.deps;
    const identity = await createIdentity(t);
    const expiring = await createSession(t, identity.id);
    const revokedExpiring = await createSession(t, identity.id);
    await store.revokeSessionById(revokedExpiring.id, t.clock.now());
    const flow = (id: string, expiresIn: number) => ({
      id,
      kind: 'login' as const,
      csrf_token: 'csrf',
      return_to: null,
      state: 'created' as const,
      failed_attempts: 0,
      issued_at: t.clock.now(),
      expires_at: t.clock.now() + expiresIn,
      token_format: 'crc32' as const,
      identity_id: null,
      first_method: null,
    });
    await store.insertFlow(flow(newToken('flow'), HOUR / 2));
    const keptFlow = newToken('flow');
    await store.insertFlow(flow(keptFlow, 2 * HOUR));
    await store.hitRateLimit('sweep:short', 60_000, t.clock.now());
    await store.hitRateLimit('sweep:long', 3 * HOUR, t.clock.now());
    // Mailed codes: kept a day past their expiry (their page says "expired"), then swept.
    const mailCode = (id: string, expiresAt: number) =>
      store.insertMailCode({
        id,
        purpose: 'verification',
        identity_id: identity.id,
        address: 'sweep@example.com',
        code_hash: 'h',
        token_hash: 'h',
        csrf_token: 'c',
        state: 'pending',
        attempts: 0,
        created_at: t.clock.now(),
        expires_at: expiresAt,
        used_at: null,
      });
    await mailCode('mc_gone', t.clock.now() - 25 * HOUR);
    await mailCode('mc_kept', t.clock.now() - 22 * HOUR);

    t.clock.advance(HOUR / 2);
    const live = await createSession(t, identity.id);
    const revokedLive = await createSession(t, identity.id);
    await store.revokeSessionById(revokedLive.id, t.clock.now());

    t.clock.advance(HOUR / 2);
    const removed = await sweep(store, t.clock);
    expect(removed).toEqual({
      sessions: 2,
      flows: 1,
      rate_limits: 1,
      webauthn_challenges: 0,
      mail_codes: 1,
      provider_authorizations: 0,
      recovery_flows: 0,
    });
    expect(await store.findMailCode('mc_gone')).toBeUndefined();
    expect(await store.findMailCode('mc_kept')).toBeDefined();
    expect(await store.findSessionById(expiring.id)).toBeUndefined();
    expect(await store.findSessionById(revokedExpiring.id)).toBeUndefined();
    expect(await store.findSessionById(live.id)).toBeDefined();
    // A revoked session outlives the sweep until its expiry: revoking it again by id is still 204.
    expect((await store.findSessionById(revokedLive.id))?.revoked_at).not.toBeNull();
    const revoke = await t.token('revoke');
    const again = await t.call('POST', '/v1/sessions/revoke', revoke, {
      session_id: revokedLive.id,
    });
    expect(again.statusCode).toBe(204);
    expect(await store.findFlow(keptFlow)).toBeDefined();
    // The surviving counter keeps counting; the swept one starts over.
    expect((await store.hitRateLimit('sweep:long', 3 * HOUR, t.clock.now())).count).toBe(2);
    expect((await store.hitRateLimit('sweep:short', 60_000, t.clock.now())).count).toBe(1);

    expect(await sweep(store, t.clock)).toEqual({
      sessions: 0,
      flows: 0,
      rate_limits: 0,
      webauthn_challenges: 0,
      mail_codes: 0,
      provider_authorizations: 0,
      recovery_flows: 0,
    });
  });
});

describeEachDatabase('registration race', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t?.close());

  describe.each(['/v1/register', '/v1/register-and-authenticate'])('%s', (url) => {
    it('32 concurrent registrations of one username: exactly one 201, the rest 409', async () => {
      const direct = await t.token('direct_auth');
      const username = `race-${url.length}`;
      const answers = await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          t.call('POST', url, direct, {
            // Different spellings of one name: uniqueness is on the canonical form.
            username: i % 2 ? username.toUpperCase() : username,
            password: `${PASSWORD} ${i}`,
          }),
        ),
      );
      const statuses = answers.map((res) => res.statusCode).sort();
      expect(statuses).toEqual([201, ...Array<number>(31).fill(409)]);
      for (const res of answers.filter((answer) => answer.statusCode === 409)) {
        expect(res.json()).toEqual({ error: 'username_taken' });
      }
      const winner = answers.find((res) => res.statusCode === 201)!.json();
      const id = winner.id ?? winner.session.identity.id;
      expect((await t.deps.store.findIdentityByUsername(username))?.id).toBe(id);
      const audit = (await t.deps.store.listAuditRecords(1000)).filter(
        (row) => row.target_identity === id && row.outcome === 'ok',
      );
      expect(audit).toHaveLength(1);
    });
  });
});
