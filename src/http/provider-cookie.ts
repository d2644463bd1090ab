import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomSecret } from '../lib/tokens.js';

const BROWSER_COOKIE = 'service_provider_browser';

/**
 * The browser binding of provider sign-ins (docs/providers.md): a random value, of which
 * each authorization request stores the hash, so that the provider's callback completes
 * only in the browser that was sent there. One value per browser, kept while it has one, so
 * sign-ins started in two tabs both come back. Path `/v1/`: read where a sign-in or a
 * connection starts and at the callback. SameSite=None only for a provider that returns
 * by a cross-site form post (Apple), which a Lax cookie would not ride on.
 */
export function browserBinding(
  request: FastifyRequest,
  reply: FastifyReply,
  options: { crossSitePost: boolean; maxAgeSeconds: number },
): string {
  const held = request.cookies[BROWSER_COOKIE];
  const value = typeof held === 'string' && held.length >= 43 ? held : randomSecret();
  reply.setCookie(BROWSER_COOKIE, value, {
    httpOnly: true,
    secure: true,
    sameSite: options.crossSitePost ? 'none' : 'lax',
    path: '/v1/',
    maxAge: Math.max(1, options.maxAgeSeconds),
  });
  return value;
}

export function presentedBinding(request: FastifyRequest): string | undefined {
  return request.cookies[BROWSER_COOKIE];
}
