import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { type AuditEntry, toAuditEntry } from '../../src/domain/audit/audit.js';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import { newToken } from '../../src/lib/tokens.js';
import { auditEntries } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  type FlowTestApp,
  LOOSE_SIGN_IN_LIMITS,
  PASSWORD,
  addIdentity,
  createFlowApp,
  expectError,
  formPost,
  operator,
  sessionTokenOf,
  signIn,
  startFlow,
  submit,
} from './helpers.js';

/** Issue 11 item 6: every flow password submission leaves a `login` row, batched. */
describeEachDatabase('sign-in audit (flow password submissions)', (kind) => {
  let t: FlowTestApp;
  beforeAll(async () => {
    t = await createFlowApp(kind, {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '3/15m',
      // Nothing is flushed by the timer during a test: only an explicit flush writes rows.
      SERVICE_AUDIT_FLUSH_MS: '600000',
    });
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  /** The `login` rows of one flow, after a flush, oldest first. */
  async function loginRows(flowId: string): Promise<AuditEntry[]> {
    return (await auditEntries(t)).filter(
      (row) => row.action === 'login' && row.details.flow_id === flowId,
    );
  }

  const at = () => new Date(t.clock.now()).toISOString();

  it('success: outcome ok, the identity, its normalised username, the address and the session', async () => {
    const flow = await startFlow(t);
    const res = await submit(t, flow.id, {
      username: 'ALICE',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(res.statusCode).toBe(200);
    const session = res.json<{ session: { id: string } }>().session;
    expect(await loginRows(flow.id)).toEqual([
      {
        action: 'login',
        service_name: 'browser',
        service_id: null,
        target_identity: t.alice.id,
        timestamp: at(),
        outcome: 'ok',
        details: {
          flow_id: flow.id,
          username: 'alice',
          sign_in_method: 'password',
          address: '127.0.0.1',
          session_id: session.id,
        },
      },
    ]);
  });

  it('is buffered off the request path: the row is written by the flush, not the sign-in', async () => {
    const flow = await startFlow(t);
    expect((await signIn(t, flow)).statusCode).toBe(200);
    const stored = (await t.deps.store.listAuditRecords(10_000)).map(toAuditEntry);
    expect(stored.filter((row) => row.details.flow_id === flow.id)).toEqual([]);
    expect(await loginRows(flow.id)).toHaveLength(1);
  });

  it('failures carry the code the submitter got, the username and, when it names one, the identity', async () => {
    const bob = await addIdentity(t, 'bob');
    await setIdentityState(t.deps, operator, bob.id, 'disabled');
    const flow = await startFlow(t);
    const attempts: [Record<string, unknown>, number, string][] = [
      [{ username: 'alice', password: 'wrong password' }, 401, 'invalid_credentials'],
      [{ username: 'Nobody', password: 'wrong password' }, 401, 'invalid_credentials'],
      [{ username: '  not a username!', password: 'wrong password' }, 401, 'invalid_credentials'],
      [{ username: 'bob', password: PASSWORD }, 403, 'identity_disabled'],
      [{ username: 'alice' }, 422, 'validation_error'],
    ];
    for (const [fields, status, code] of attempts) {
      const res = await submit(t, flow.id, { ...fields, csrf_token: flow.csrf_token });
      expect(res.statusCode).toBe(status);
      expect(res.json()).toMatchObject({ error: code });
    }
    const rows = await loginRows(flow.id);
    expect(rows.map((row) => [row.outcome, row.target_identity, row.details.username])).toEqual([
      ['invalid_credentials', t.alice.id, 'alice'],
      ['invalid_credentials', null, 'nobody'],
      ['invalid_credentials', null, null],
      ['identity_disabled', bob.id, 'bob'],
      ['validation_error', null, 'alice'],
    ]);
    for (const row of rows) {
      expect(row).toMatchObject({ service_name: 'browser', service_id: null });
      expect(row.details).toEqual({
        flow_id: flow.id,
        username: row.details.username,
        sign_in_method: 'password',
        address: '127.0.0.1',
      });
    }
  });

  it('invalid_token for a wrong CSRF token, an expired flow and a used flow', async () => {
    const flow = await startFlow(t);
    expectError(
      await submit(t, flow.id, { username: 'alice', password: PASSWORD, csrf_token: 'forged' }),
      401,
      'invalid_token',
    );
    expect((await signIn(t, flow)).statusCode).toBe(200);
    expectError(await signIn(t, flow), 401, 'invalid_token');
    const expiring = await startFlow(t);
    t.clock.advance(16 * 60_000);
    expectError(await signIn(t, expiring), 401, 'invalid_token');

    expect((await loginRows(flow.id)).map((row) => row.outcome)).toEqual([
      'invalid_token',
      'ok',
      'invalid_token',
    ]);
    expect((await loginRows(expiring.id)).map((row) => row.outcome)).toEqual(['invalid_token']);
  });

  it('rate_limited past the per-username limit', async () => {
    await addIdentity(t, 'erin');
    const flow = await startFlow(t);
    const body = { username: 'erin', password: 'wrong password', csrf_token: flow.csrf_token };
    for (let i = 0; i < 3; i++) expect((await submit(t, flow.id, body)).statusCode).toBe(401);
    expect((await submit(t, flow.id, body)).statusCode).toBe(429);
    const rows = await loginRows(flow.id);
    expect(rows.at(-1)).toMatchObject({
      outcome: 'rate_limited',
      details: { username: 'erin', address: '127.0.0.1' },
    });
  });

  it('forbidden for a foreign Origin (login CSRF), refused before the body is read', async () => {
    const flow = await startFlow(t);
    expectError(await signIn(t, flow, { origin: 'https://evil.example' }), 403, 'forbidden');
    expect(await loginRows(flow.id)).toEqual([
      expect.objectContaining({
        outcome: 'forbidden',
        target_identity: null,
        details: {
          flow_id: flow.id,
          username: null,
          sign_in_method: 'password',
          address: '127.0.0.1',
        },
      }),
    ]);
  });

  it('not_found for an unknown flow id; a path that is no flow id leaves no row', async () => {
    const unknown = newToken('flow');
    expectError(await submit(t, unknown, { username: 'alice', password: 'x' }), 404, 'not_found');
    expect(await loginRows(unknown)).toEqual([
      expect.objectContaining({
        outcome: 'not_found',
        details: expect.objectContaining({ username: 'alice' }),
      }),
    ]);
    const before = (await auditEntries(t)).length;
    expectError(await submit(t, 'garbage', { username: 'alice', password: 'x' }), 404, 'not_found');
    expect((await auditEntries(t)).length).toBe(before);
  });

  it('records the address a browser_proxy states, next to the proxy’s own flow_password row', async () => {
    const proxy = await t.token('browser_proxy');
    const flow = await startFlow(t);
    const res = await signIn(t, flow, {
      authorization: `Bearer ${proxy}`,
      'x-service-client-ip': '203.0.113.9',
    });
    expect(res.statusCode).toBe(200);
    const rows = (await auditEntries(t)).filter(
      (row) => row.action === 'login' || row.action === 'flow_password',
    );
    expect(rows.slice(-2).map((row) => [row.action, row.service_name, row.outcome])).toEqual(
      expect.arrayContaining([
        ['login', 'browser', 'ok'],
        ['flow_password', expect.stringMatching(/^svc-/), 'ok'],
      ]),
    );
    expect((await loginRows(flow.id))[0]!.details.address).toBe('203.0.113.9');
  });

  it('hosted page form posts are recorded the same way', async () => {
    const flow = await startFlow(t);
    const wrong = await formPost(t, flow.id, {
      username: 'alice',
      password: 'wrong password',
      csrf_token: flow.csrf_token,
    });
    expect(wrong.statusCode).toBe(401);
    const right = await formPost(t, flow.id, {
      username: 'alice',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(right.statusCode).toBe(200);
    expect(
      (await loginRows(flow.id)).map((row) => [
        row.outcome,
        row.target_identity,
        row.details.username,
      ]),
    ).toEqual([
      ['invalid_credentials', t.alice.id, 'alice'],
      ['ok', t.alice.id, 'alice'],
    ]);
  });

  it('logout is recorded as session_revoke by the browser, with the address', async () => {
    const signedIn = await signIn(t, await startFlow(t));
    const token = sessionTokenOf(signedIn);
    const session = signedIn.json<{ session: { id: string } }>().session;
    const res = await t.inject({
      method: 'POST',
      url: '/v1/logout',
      headers: { cookie: `service_session=${token}` },
    });
    expect(res.statusCode).toBe(204);
    const row = (await auditEntries(t)).at(-1);
    expect(row).toEqual({
      action: 'session_revoke',
      service_name: 'browser',
      service_id: null,
      target_identity: t.alice.id,
      timestamp: at(),
      outcome: 'ok',
      details: { via: 'logout', address: '127.0.0.1', session_id: session.id },
    });
  });

  it('never records a password, in any row', async () => {
    const wrong = 'wrong password 7f3e';
    const flow = await startFlow(t);
    await submit(t, flow.id, { username: 'nobody', password: wrong, csrf_token: flow.csrf_token });
    await submit(t, flow.id, { username: 'alice', password: wrong, csrf_token: 'forged' });
    await submit(t, flow.id, { username: 'alice', password: 5, csrf_token: flow.csrf_token });
    await formPost(t, flow.id, { username: 'alice', password: wrong, csrf_token: flow.csrf_token });
    await signIn(t, flow);
    await signIn(t, await startFlow(t), { origin: 'https://evil.example' });
    const text = JSON.stringify(await auditEntries(t));
    expect(text).toContain('"login"');
    for (const secret of [wrong, PASSWORD]) expect(text).not.toContain(secret);
  });
});
