import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import {
  createSessionGuard,
  type SessionGuardOptions,
  type TesseraRequestSession,
} from './session-guard.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by Tessera's hook once the session cookie checked out. */
    tessera?: TesseraRequestSession;
  }
}

export type { SessionGuardOptions as TesseraFastifyOptions, TesseraRequestSession };

/**
 * A Fastify `preHandler` hook: checks the session cookie and puts `{session, token}` on
 * `request.tessera`; without a valid session it answers 401 (403 for a disabled identity),
 * or redirects a browser to the hosted login page with `loginRedirect`. Add it to a route
 * (`{ preHandler: hook }`) or a scope (`app.addHook('preHandler', hook)`).
 */
export function tesseraSession(options: SessionGuardOptions): preHandlerAsyncHookHandler {
  const guard = createSessionGuard(options);
  return async function tesseraSessionHook(request: FastifyRequest, reply: FastifyReply) {
    const decision = await guard.decide({
      method: request.method,
      url: request.url,
      cookie: request.headers.cookie,
      accept: request.headers.accept,
      host: request.headers.host,
      protocol: request.protocol,
    });
    if (decision.action === 'continue') {
      if (decision.session) request.tessera = decision.session;
      return;
    }
    if (decision.action === 'redirect') return reply.redirect(decision.location, 303);
    return reply.code(decision.status).send(decision.body);
  };
}
