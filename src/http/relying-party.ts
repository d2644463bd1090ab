import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { FlowPage } from '../domain/login-flows/flow-service.js';
import { type RelyingParty, relyingParty } from '../domain/passkeys/webauthn.js';
import type { AppDeps } from './deps.js';
import { flowSubmitOrigins } from './origins.js';
import { mailLocaleOf } from './mail-locale.js';

/**
 * The host name browsers address the service by: SERVICE_PUBLIC_URL's, else the request's
 * (like ownOrigins: a browser cannot be made to send a Host other than the site it is on).
 */
export function serviceHost(request: FastifyRequest, config: Config): string {
  return config.publicUrl ? new URL(config.publicUrl).hostname : request.hostname;
}

/**
 * The page a flow request comes from, for methods whose proof depends on it: passkeys are
 * used on the service's own pages and the operator's login UI, as passwords are submitted.
 */
export function flowPage(request: FastifyRequest, config: Config): FlowPage {
  const locale = mailLocaleOf(request);
  return {
    origins: flowSubmitOrigins(request, config),
    host: serviceHost(request, config),
    // The language a method's mail is written in (an email code's).
    ...(locale === undefined ? {} : { locale }),
  };
}

/** The relying party of an account request (same origins as a flow: docs/passkeys.md). */
export function requestRelyingParty(deps: AppDeps, request: FastifyRequest): RelyingParty {
  const page = flowPage(request, deps.config);
  return relyingParty(deps.relyingParty, page.host, page.origins);
}
