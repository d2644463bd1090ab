import { UNKNOWN_DEVICE } from '../../src/domain/sessions/session.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { attachLink } from '../../src/domain/links/link-service.js';
import { type FlowDeps, submitToFlow } from '../../src/domain/login-flows/flow-service.js';
import { completeSignIn } from '../../src/domain/sign-in/complete-sign-in.js';
import { linkMethod } from '../../src/domain/sign-in/link/link-method.js';
import { signInNotes } from '../../src/domain/sign-in/method.js';
import type { SignInMethodDeps } from '../../src/domain/sign-in/methods.js';
import { enrolledSecondFactors } from '../../src/domain/sign-in/second-factors.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { identityRecord } from '../helpers/core.js';
import { type FlowTestApp, createFlowApp, flowRow, startFlow } from '../flows/helpers.js';

const operator = { service_name: 'seam-tests', service_id: null };
const MAX_ATTEMPTS = 3;

/**
 * Issue 13 item 1: the flow mechanics (state, CSRF, per-address limit, attempt cap,
 * completion) name no method. Driven here with the link method, which has no flow route of
 * its own: whatever the flow does for a password it does the same for it.
 */
describeEachDatabase('login flow mechanics with a method other than password', (kind) => {
  let t: FlowTestApp;
  let deps: FlowDeps & SignInMethodDeps;
  const pair = { provider: 'seam-idp', subject: 'alice-at-idp' };

  beforeAll(async () => {
    t = await createFlowApp(kind, {
      SERVICE_FLOW_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
      SERVICE_RATE_LIMIT_LOGIN_IP: '1000/60s',
      SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000/60s',
    });
    deps = {
      ...t.deps,
      flows: {
        ttlMs: t.deps.config.flowTtlMs,
        maxAttempts: t.deps.config.flowMaxAttempts,
        createRule: t.deps.config.rateLimits.flowCreateIp,
        submitRule: t.deps.config.rateLimits.loginIp,
      },
      secondFactorsOf: (identityId) => enrolledSecondFactors(t.deps.store, identityId),
    };
    const notes = { target: null, details: {} };
    await attachLink(t.deps, operator, t.alice.id, { ...pair, verified: true }, notes);
  });
  afterAll(() => t?.close());
  beforeEach(() => t.clock.advance(60 * 60_000));

  const submission = async (fields: Record<string, unknown>, csrf?: string) => {
    const flow = await startFlow(t);
    const notes = signInNotes();
    const input = {
      flowId: flow.id,
      csrfToken: csrf ?? flow.csrf_token,
      fields,
      address: '192.0.2.7',
      device: UNKNOWN_DEVICE,
      notes,
    };
    return { flow, notes, submit: () => submitToFlow(deps, linkMethod, input) };
  };

  const codeOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'ok',
      (error: unknown) => (error instanceof DomainError ? error.code : String(error)),
    );

  it('completes the flow with a session made by that method, and notes identity and session', async () => {
    const { flow, notes, submit } = await submission(pair);
    const result = await submit();
    if (!result.completed) throw new Error('alice has no second factor: the flow must complete');
    const { returnTo, minted } = result;
    expect(returnTo).toBeNull();
    expect(minted.session.authenticated_via).toBe('link');
    expect(minted.session.identity.id).toBe(t.alice.id);
    expect(notes).toEqual({ identityId: t.alice.id, sessionId: minted.session.id });
    expect((await flowRow(t, flow.id)).state).toBe('completed');

    const whoami = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      headers: { cookie: `service_session=${minted.token}` },
    });
    expect(whoami.statusCode).toBe(200);
    expect(whoami.json()).toMatchObject({ authenticated_via: 'link' });
    // A flow completes once, whichever method completed it.
    expect(await codeOf(submit())).toBe('invalid_token');
  });

  it('records the method’s credential failures on the flow and closes it at the cap', async () => {
    const { flow, submit } = await submission({ provider: 'seam-idp', subject: 'nobody' });
    for (let i = 0; i < MAX_ATTEMPTS; i++)
      expect(await codeOf(submit())).toBe('invalid_credentials');
    const row = await flowRow(t, flow.id);
    expect({ state: row.state, failed: row.failed_attempts }).toEqual({
      state: 'failed',
      failed: MAX_ATTEMPTS,
    });
    expect((await t.deps.store.listFlowErrors(flow.id)).map((e) => e.error)).toEqual(
      Array(MAX_ATTEMPTS).fill('invalid_credentials'),
    );
    expect(await codeOf(submit())).toBe('invalid_token');
  });

  it('checks CSRF before the method, and counts neither a forged token nor unreadable fields', async () => {
    const forged = await submission(pair, 'forged');
    expect(await codeOf(forged.submit())).toBe('invalid_token');
    expect(forged.notes).toEqual({ identityId: null, sessionId: null });

    const unreadable = await submission({ provider: 'seam-idp' });
    expect(await codeOf(unreadable.submit())).toBe('validation_error');
    for (const { flow } of [forged, unreadable]) {
      const row = await flowRow(t, flow.id);
      expect({ state: row.state, failed: row.failed_attempts }).toEqual({
        state: 'created',
        failed: 0,
      });
    }
  });

  it('completeSignIn stores the assurance reached, and whoami says it', async () => {
    const identity = await identityRecord(t, t.alice.id);
    const minted = await t.deps.store.transaction((tx) =>
      completeSignIn(
        t.deps,
        tx,
        identity,
        { id: 'password', assurance: 'aal2' },
        null,
        UNKNOWN_DEVICE,
      ),
    );
    expect(minted.session).toMatchObject({ authenticated_via: 'password', aal: 'aal2' });
    const whoami = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      headers: { cookie: `service_session=${minted.token}` },
    });
    expect(whoami.json()).toMatchObject({ authenticated_via: 'password', aal: 'aal2' });
  });
});
