import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompletedFlow, FlowSubmission } from '../domain/login-flows/flow-service.js';
import { type SignInMethod, signInNotes } from '../domain/sign-in/method.js';
import { addressOf } from './client-address.js';
import { setSessionCookie } from './cookies.js';
import type { AppDeps } from './deps.js';
import { browserDevice } from './device.js';
import { clearFlowCookie } from './flow-cookie.js';
import { signedInPage } from './login-page/render.js';
import { isFormPost, sendPage } from './login-page/respond.js';
import type { SubmitRoute } from './flow-schemas.js';
import { attemptOf } from './sign-in-audit.js';

/**
 * What `POST /v1/flows/{id}/<method>` hands the domain, first factor or second: the body's
 * CSRF token and fields, the address and the device. The audit row learns the address and,
 * given a method, the claim its body makes; the claim first, so a refused proxy header is
 * recorded with it.
 */
export async function flowSubmissionOf(
  deps: AppDeps,
  request: FastifyRequest<SubmitRoute>,
  method?: Pick<SignInMethod<string, unknown, never>, 'claim'>,
): Promise<FlowSubmission> {
  const { csrf_token: csrfToken, ...fields } = request.body;
  const attempt = attemptOf(request);
  if (attempt && method) attempt.claim = method.claim(fields);
  const address = await addressOf(deps, request);
  if (attempt) attempt.address = address;
  return {
    flowId: request.params.id,
    csrfToken,
    fields,
    address,
    device: browserDevice(request, address),
    notes: attempt ?? signInNotes(),
  };
}

/**
 * A completed flow's answer: the session cookie set and the flow's cleared; the session as
 * JSON, or for a form post a 303 to return_to, else the signed-in page.
 */
export function sendSignedIn(
  deps: AppDeps,
  request: FastifyRequest<SubmitRoute>,
  reply: FastifyReply,
  { returnTo, minted }: CompletedFlow,
) {
  setSessionCookie(reply, minted.token, {
    cookieDomain: deps.config.cookieDomain,
    sessionTtlMs: deps.sessionTtlMs,
  });
  clearFlowCookie(request, reply, request.params.id);
  if (!isFormPost(request)) return { return_to: returnTo, session: minted.session };
  if (returnTo) return reply.redirect(returnTo, 303);
  return sendPage(reply, 200, signedInPage(minted.session));
}
