import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'service_session';

export interface CookieSettings {
  cookieDomain: string | null;
  sessionTtlMs: number;
}

/**
 * docs/api.md section 4: HttpOnly (no script reads it), Secure (never over plain HTTP; browsers treat
 * localhost as secure, so local development still works), SameSite=Lax (not sent on
 * cross-site subrequests), Path=/. Host-only unless SERVICE_COOKIE_DOMAIN widens it.
 */
function attributes(settings: CookieSettings): CookieSerializeOptions {
  return {
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
    path: '/',
    ...(settings.cookieDomain ? { domain: settings.cookieDomain } : {}),
  };
}

export function setSessionCookie(
  reply: FastifyReply,
  token: string,
  settings: CookieSettings,
): void {
  // Max-Age equals the session lifetime, so the cookie never outlives the session it holds.
  reply.setCookie(SESSION_COOKIE, token, {
    ...attributes(settings),
    maxAge: Math.floor(settings.sessionTtlMs / 1000),
  });
}

/** The same name, Domain and Path as when it was set, or the browser keeps the old cookie. */
export function clearSessionCookie(reply: FastifyReply, settings: CookieSettings): void {
  reply.clearCookie(SESSION_COOKIE, attributes(settings));
}

export function sessionCookie(request: FastifyRequest): string | undefined {
  return request.cookies[SESSION_COOKIE];
}
