import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { revokeServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { GRANTS } from '../../src/domain/service-tokens/service-token.js';
import type { TestApp } from './app.js';
import {
  auditSince,
  badBearers,
  createIdentity,
  createSession,
  expectError,
  testActor,
} from './core.js';
import { type CoreEndpoint, send, sendWithHeader } from './core-endpoints.js';

/** A grant refusal's message names the grant the token lacks (SPEC 5.2). */
const lacks = (grant: string) => new RegExp(`^this service token lacks the ${grant} grant$`);

/** The bearers a grant matrix presents: one token per grant, and some that must not work. */
export interface GrantTokens {
  /** The token holding exactly `grant`. */
  only(grant: string): string;
  /** A token holding every grant, revoked. */
  revoked: string;
  /** A session token (not a service token). */
  session: string;
}

export async function createGrantTokens(t: TestApp): Promise<GrantTokens> {
  const single = new Map<string, string>();
  for (const grant of GRANTS) single.set(grant, await t.token(grant));
  const revoked = await t.token(...GRANTS);
  const services = await t.deps.store.listServiceTokens();
  await revokeServiceToken(t.deps, testActor, services.at(-1)!.id);
  const session = (await createSession(t, (await createIdentity(t)).id)).token;
  return { only: (grant) => single.get(grant)!, revoked, session };
}

/** Asserts that each of `badBearers` (built around `valid`) is refused with 401. */
export async function expectBadBearersRefused(
  send: (bearer: string) => Promise<LightMyRequestResponse>,
  valid: string,
  tokens: GrantTokens,
): Promise<void> {
  for (const [label, bearer] of badBearers(valid, tokens.revoked, tokens.session)) {
    const res = await send(bearer);
    expect({ label, status: res.statusCode, body: res.json() }).toEqual({
      label,
      status: 401,
      body: { error: 'invalid_service_token' },
    });
  }
}

/**
 * SPEC.md 5.1 and 5.2 for each of `endpoints`: allowed with its grant alone; 403 forbidden,
 * audited, with any other grant alone or all the others; 401 without a bearer or with an
 * unusable one. `unchanged`, when given, reads what a forbidden call must leave as it was.
 */
export function describeGrantMatrix(
  endpoints: CoreEndpoint[],
  context: () => { t: TestApp; tokens: GrantTokens },
  unchanged?: () => Promise<unknown>,
): void {
  describe.each(endpoints)('$name', (endpoint) => {
    it(`answers ${endpoint.ok} with only grant ${endpoint.grant}`, async () => {
      const { t, tokens } = context();
      const res = await send(t, await endpoint.request(t), tokens.only(endpoint.grant));
      expect(res.statusCode).toBe(endpoint.ok);
    });

    const others = GRANTS.filter((grant) => grant !== endpoint.grant);
    it.each(others)('answers 403 forbidden with only grant %s, audited', async (grant) => {
      const { t, tokens } = context();
      const request = await endpoint.request(t);
      const before = await unchanged?.();
      const audited = (await auditSince(t, 0)).length;
      expectError(
        await send(t, request, tokens.only(grant)),
        403,
        'forbidden',
        lacks(endpoint.grant),
      );
      if (unchanged) expect(await unchanged()).toEqual(before);
      const rows = await auditSince(t, audited);
      expect(rows.filter((row) => row.outcome === 'forbidden')).toEqual([
        expect.objectContaining({ action: endpoint.action, service_name: expect.any(String) }),
      ]);
    });

    it('answers 403 forbidden with every grant but the required one', async () => {
      const { t } = context();
      const token = await t.token(...others);
      expectError(
        await send(t, await endpoint.request(t), token),
        403,
        'forbidden',
        lacks(endpoint.grant),
      );
    });

    it('answers 401 missing_service_token without an Authorization header', async () => {
      const { t } = context();
      expectError(await send(t, await endpoint.request(t), null), 401, 'missing_service_token');
    });

    it('answers 401 invalid_service_token for unusable bearers', async () => {
      const { t, tokens } = context();
      const request = await endpoint.request(t);
      const valid = tokens.only(endpoint.grant);
      await expectBadBearersRefused((bearer) => send(t, request, bearer), valid, tokens);
      for (const header of [`Basic ${valid}`, 'Bearer', '', `Token ${valid}`]) {
        const res = await sendWithHeader(t, request, header);
        expect({ header, status: res.statusCode, body: res.json() }).toEqual({
          header,
          status: 401,
          body: { error: 'invalid_service_token' },
        });
      }
    });
  });
}
