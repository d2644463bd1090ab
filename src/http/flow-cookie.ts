import type { FastifyReply, FastifyRequest } from 'fastify';
import { type FlowRecord, flowBinding, isBoundTo } from '../domain/login-flows/flow.js';

const FLOW_COOKIE = 'service_flow';

/**
 * Scoped to the flow's own URLs (`GET /v1/flows/{id}` and its password endpoint): the
 * cookie rides on no other request, and flows in two tabs keep two cookies. HttpOnly,
 * Secure and SameSite=Lax like the session cookie; host-only, since only Tessera reads it.
 */
function attributes(flowId: string) {
  return {
    httpOnly: true,
    secure: true,
    sameSite: 'lax' as const,
    path: `/v1/flows/${flowId}`,
  };
}

/** Binds the flow to this browser until the flow expires. */
export function setFlowCookie(reply: FastifyReply, flow: FlowRecord, now: number): void {
  const maxAge = Math.max(1, Math.ceil((flow.expires_at - now) / 1000));
  reply.setCookie(FLOW_COOKIE, flowBinding(flow), { ...attributes(flow.id), maxAge });
}

/** After sign-in the binding has served its purpose; only a browser that holds one is sent this. */
export function clearFlowCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  flowId: string,
): void {
  if (request.cookies[FLOW_COOKIE] === undefined) return;
  reply.clearCookie(FLOW_COOKIE, attributes(flowId));
}

export function presentsFlowCookie(request: FastifyRequest, flow: FlowRecord): boolean {
  return isBoundTo(flow, request.cookies[FLOW_COOKIE]);
}
