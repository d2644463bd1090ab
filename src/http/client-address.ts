import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.js';
import { addressKey } from '../domain/login-flows/address-key.js';
import { consumeRateLimit } from '../domain/rate-limit/rate-limiter.js';
import type { ServiceCaller } from '../domain/service-tokens/service-token.js';
import type { AppDeps } from './deps.js';
import { presentedCaller } from './service-auth.js';

export const CLIENT_IP_HEADER = 'x-service-client-ip';

/**
 * The end user's address for per-IP limits. `X-Service-Client-Ip` is believed only from a
 * caller holding `browser_proxy`; anyone else stating it is refused rather than ignored,
 * so a misconfigured proxy is noticed instead of silently sharing one bucket.
 */
export function clientAddress(request: FastifyRequest, caller: ServiceCaller | null): string {
  const stated = request.headers[CLIENT_IP_HEADER];
  if (stated === undefined) return request.ip;
  if (!caller) throw new DomainError('missing_service_token');
  if (!caller.grants.has('browser_proxy')) throw new DomainError('forbidden');
  const address = Array.isArray(stated) ? stated[0] : stated;
  if (!address || isIP(address.trim()) === 0) {
    throw new DomainError(
      'validation_error',
      `${CLIENT_IP_HEADER} must be an IPv4 or IPv6 address`,
    );
  }
  return address.trim();
}

/**
 * The per-IP key: the stated end-user address from a browser_proxy caller, else the peer.
 * A bearer token is looked at (and its use audited) whenever one is presented or an address
 * is stated; any other Authorization scheme is the browser's own business (a site behind
 * HTTP Basic auth sends it on every request) and is left alone.
 */
export async function addressOf(deps: AppDeps, request: FastifyRequest): Promise<string> {
  const bearer = /^Bearer\s/i.test(request.headers.authorization ?? '');
  const stated = request.headers[CLIENT_IP_HEADER] !== undefined;
  const caller = bearer || stated ? await presentedCaller(deps, request) : null;
  return clientAddress(request, caller);
}

/**
 * A request for a challenge or a provider's URL: each costs a write, and an unauthenticated
 * caller needs no valid flow to send it, so it is counted per client address
 * (SERVICE_RATE_LIMIT_CHALLENGE_IP) before anything is looked up. Answers the address.
 */
export async function countChallengeRequest(
  deps: AppDeps,
  request: FastifyRequest,
): Promise<string> {
  const address = await addressOf(deps, request);
  await consumeRateLimit(
    deps.store,
    deps.clock,
    `flow-challenge:ip:${addressKey(address)}`,
    deps.config.rateLimits.challengeIp,
  );
  return address;
}
