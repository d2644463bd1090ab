import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { BROWSER_ACTOR } from '../../domain/login-flows/sign-in-audit.js';
import { revokeSessionByToken, verifySession } from '../../domain/sessions/session-service.js';
import { isWellFormedToken } from '../../lib/tokens.js';
import { clearSessionCookie, sessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { signedOutPage } from '../login-page/render.js';
import { sendPage } from '../login-page/respond.js';
import { logoutOrigins, refuseForeignOrigin } from '../origins.js';
import { NoContent, SessionSchema, responses } from '../schemas.js';

/**
 * The session CORS zone. Both endpoints read only the `service_session` cookie: an
 * `Authorization` or `X-Service-Client-Ip` header changes nothing here.
 */
export function browserSessionRoutes(app: FastifyInstance, deps: AppDeps): void {
  const cookieSettings = {
    cookieDomain: deps.config.cookieDomain,
    sessionTtlMs: deps.sessionTtlMs,
  };

  app.get(
    '/v1/whoami',
    {
      schema: {
        operationId: 'whoami',
        summary: 'The signed-in session of this browser',
        tags: ['browser'],
        description:
          'The session in the service_session cookie. Verified afresh on every call; no caching headers.',
        security: [{ sessionCookie: [] }],
        response: responses({ 200: SessionSchema }, [401, 403, 503, 504]),
      },
    },
    async (request) => verifySession(deps, sessionCookie(request)),
  );

  app.post(
    '/v1/logout',
    {
      onRequest: refuseForeignOrigin((request) => logoutOrigins(request, deps.config)),
      schema: {
        operationId: 'logout',
        summary: 'Sign this browser out',
        tags: ['browser'],
        description:
          "Revokes the session in the cookie and clears the cookie. 204 also without a valid cookie; with `?page=signed-out` (the hosted pages' Sign out form) 200 and the signed-out page instead.",
        security: [{}, { sessionCookie: [] }],
        querystring: Type.Object({
          page: Type.Optional(
            Type.Literal('signed-out', {
              description: 'Answer with the hosted "Signed out" page instead of 204',
            }),
          ),
        }),
        response: responses(
          {
            200: Type.Unsafe({
              description: 'Signed out, to a navigating form post: the hosted "Signed out" page',
              content: { 'text/html': { schema: Type.String({ description: 'HTML' }) } },
            }),
            204: NoContent('Signed out; the cookie is cleared'),
          },
          [403, 422, 503, 504],
        ),
      },
    },
    async (request, reply) => {
      const token = sessionCookie(request);
      // Anything that is not a session token names no session: nothing to revoke, and
      // the cookie is cleared all the same.
      if (isWellFormedToken('session', token)) {
        // The end user ending their own session, as the sign-in rows name them. Logout
        // reads no proxy header, so the address is the connection's peer.
        const actor = { ...BROWSER_ACTOR, details: { via: 'logout', address: request.ip } };
        await revokeSessionByToken(deps, actor, token);
      }
      clearSessionCookie(reply, cookieSettings);
      // The hosted pages' "Sign out" is a plain form: a 204 would leave the browser on the
      // page it signed out of, so that form asks for a page saying it worked. The opt-in is
      // explicit so that every other caller (fetch, curl, a backend) keeps the 204.
      if ((request.query as { page?: string }).page === 'signed-out') {
        return sendPage(reply, 200, signedOutPage());
      }
      return reply.code(204).send();
    },
  );
}
