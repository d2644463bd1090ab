import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.js';
import type { AppDeps } from './deps.js';
import { handleError, sendError } from './errors.js';
import { isFormPost, sendFailurePage } from './login-page/respond.js';
import { actorOf, presentedCaller } from './service-auth.js';

/** The flow submit route, as the undecoded path of a form post reaches us. */
const FLOW_SUBMIT = /^\/v1\/flows\/[^/?]*\/password(?:\?|$)/;

/**
 * Fastify's `frameworkErrors`: the router could not match the path because a segment is
 * not valid percent-encoding or is longer than maxParamLength (100; ids are 36). Such a
 * path names no resource, so it is answered as an unknown route is (404 `not_found`, the
 * token audited when one is presented), never with Fastify's body, which echoes the path.
 * A browser's form post to the flow submit route gets the hosted page, as on every other
 * failure of that form. No route hook runs here, so the headers are set here too.
 */
export function frameworkErrors(deps: AppDeps, headers: Record<string, string>) {
  return function answerRouterError(
    error: FastifyError,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    reply.headers(headers);
    if (error.code !== 'FST_ERR_BAD_URL' && error.code !== 'FST_ERR_MAX_PARAM_LENGTH') {
      handleError(error, request, reply);
      return;
    }
    void answerUnroutable(deps, request, reply);
  };
}

async function answerUnroutable(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const presented = request.headers.authorization !== undefined;
  const caller = presented ? await presentedCaller(deps, request).catch(() => null) : null;
  const error = new DomainError('not_found');
  if (request.method === 'POST' && isFormPost(request) && FLOW_SUBMIT.test(request.url)) {
    sendFailurePage(request, reply, error, { formUsable: false, now: deps.clock.now() });
  } else {
    sendError(request, reply, error);
  }
  if (presented) {
    deps.audit.enqueue(actorOf(caller), {
      action: 'unknown_route',
      outcome: 'not_found',
      details: { method: request.method },
    });
  }
}
