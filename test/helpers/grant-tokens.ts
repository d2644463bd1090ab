import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { revokeServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { GRANTS } from '../../src/domain/service-tokens/service-token.js';
import type { TestApp } from './app.js';
import { badBearers, createIdentity, createSession, testActor } from './core.js';

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
