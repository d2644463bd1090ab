import { afterEach, beforeEach, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.js';
import { newId } from '../../src/lib/ids.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { getPage, operatorAtAal2 } from './helpers.js';

const HOUR = 3_600_000;

function row(at: number, action: string, outcome: string, details: object): AuditRecord {
  return {
    id: newId(),
    at,
    action,
    service_name: 'browser',
    service_id: null,
    target_identity: null,
    outcome,
    details: JSON.stringify(details),
  };
}

/** Issue 25's overview: counted by each database from the audit log, drawn as SVG. */
describeEachDatabase('admin console: overview', (kind) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(kind);
  });
  afterEach(() => t.close());

  it('counts sign-ins per hour by result and method over 24 hours and 7 days', async () => {
    const { session } = await operatorAtAal2(t);
    const now = t.clock.now();
    await t.deps.audit.flush();
    // Only the rows below from here on: the operator's own sign-ins were 'login' rows too.
    const before = await getPage(t, session, '/v1/admin');
    const baseline = /<tr><th scope="row">password<\/th><td>(\d+)<\/td><td>(\d+)<\/td><\/tr>/.exec(
      before.body,
    );
    const [baseOk, baseFailed] = [Number(baseline?.[1] ?? 0), Number(baseline?.[2] ?? 0)];
    await t.deps.store.insertAuditRecords([
      row(now - HOUR, 'login', 'ok', { sign_in_method: 'passkey' }),
      row(now - HOUR, 'login', 'ok', { sign_in_method: 'passkey' }),
      row(now - 2 * HOUR, 'login', 'invalid_credentials', { sign_in_method: 'password' }),
      row(now - 2 * HOUR, 'login', 'second_factor_required', { sign_in_method: 'password' }),
      row(now - 3 * HOUR, 'authenticate_password', 'ok', {}),
      // A claim that looks like the method key is escaped in the JSON: not a passkey.
      row(now - 3 * HOUR, 'login', 'rate_limited', { username: '","sign_in_method":"passkey' }),
      row(now - 48 * HOUR, 'authenticate_link', 'ok', {}),
      row(now - 8 * 24 * HOUR, 'login', 'ok', { sign_in_method: 'passkey' }),
      row(now - HOUR, 'identity_disable', 'ok', {}),
    ]);
    const page = await getPage(t, session, '/v1/admin');
    expect(page.statusCode).toBe(200);
    const methods = (id: string) => {
      const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(page.body)![1]!;
      return Object.fromEntries(
        [...table.matchAll(/<th scope="row">([^<]+)<\/th><td>(\d+)<\/td><td>(\d+)<\/td>/g)].map(
          (m) => [m[1], [Number(m[2]), Number(m[3])]],
        ),
      );
    };
    expect(methods('sign-ins-24h-methods')).toEqual({
      password: [baseOk + 1, baseFailed + 1],
      passkey: [2, 0],
      other: [0, 1],
    });
    expect(methods('sign-ins-7d-methods')).toEqual({
      password: [baseOk + 1, baseFailed + 1],
      link: [1, 0],
      passkey: [2, 0],
      other: [0, 1],
    });
    expect(page.body).toMatch(/<svg viewBox="0 0 720 160" role="img"/);
    expect(page.body.match(/<g><title>/g)).toHaveLength(24 + 7 * 24 + 30);
    // root's sessions: the enrolment one and the aal2 one.
    expect(page.body).toContain('<p id="live-sessions"><strong>2</strong> active session(s).</p>');
    expect(page.body).toMatch(/New identities per day, last 30 days · .* · 1 new identities/);
  });
});
