import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor, AuditLog } from '../domain/audit/audit-log.js';
import { DomainError, validationError } from '../domain/errors.js';
import type { Grant, ServiceCaller } from '../domain/service-tokens/service-token.js';
import { authenticateServiceToken } from '../domain/service-tokens/service-token-service.js';
import type { Store } from '../domain/store.js';
import type { LegacyTokens } from '../domain/tokens/legacy-tokens.js';
import { isUuid } from '../lib/ids.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The grant a service route requires; routes without one are not service routes. */
    grant?: Grant;
    /** Audit action name for the route. */
    action?: string;
    /** The use case writes its own audit row in its transaction when it succeeds. */
    auditedInTransaction?: boolean;
  }
  interface FastifyRequest {
    caller: ServiceCaller | null;
    /** Set once a service token was presented: every such request leaves an audit row. */
    audit: { target: string | null; details: Record<string, unknown> } | null;
  }
}

/** What naming the caller of a bearer token needs: the offline token check, then the store. */
export interface CallerLookup {
  store: Store;
  legacyTokens: Pick<LegacyTokens, 'accepts'>;
}

export function actorOf(caller: ServiceCaller | null): Actor {
  return { service_name: caller?.name ?? null, service_id: caller?.id ?? null };
}

/** Reads `Authorization: Bearer …`; null when absent. A present but unusable header is refused. */
export async function presentedCaller(
  deps: CallerLookup,
  request: FastifyRequest,
): Promise<ServiceCaller | null> {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  request.audit ??= { target: null, details: {} };
  request.caller = await callerOf(deps, header);
  return request.caller;
}

/** The service an `Authorization` header value names; a header that names none is refused. */
export async function callerOf(deps: CallerLookup, header: string): Promise<ServiceCaller> {
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match?.[1]) throw new DomainError('invalid_service_token');
  return authenticateServiceToken(deps, match[1]);
}

/**
 * Bearer authentication and the grant check run in onRequest, before the body is parsed,
 * so an unauthenticated caller learns nothing about body validation. The hook is attached
 * to the routes that declare a grant only: the browser endpoints (whoami on every page
 * view) never pay for it. Unknown routes audit a presented token in the not-found handler.
 */
export function registerServiceAuth(
  app: FastifyInstance,
  deps: CallerLookup & { audit: AuditLog },
): void {
  app.decorateRequest('caller', null);
  app.decorateRequest('audit', null);

  app.addHook('onRoute', (route) => {
    const grant = route.config?.grant;
    if (!grant) return;
    const takesBody = route.schema?.body !== undefined;
    const authorize = async (request: FastifyRequest) => {
      const caller = await presentedCaller(deps, request);
      if (!caller) throw new DomainError('missing_service_token');
      if (!caller.grants.has(grant)) {
        throw new DomainError('forbidden', `this service token lacks the ${grant} grant`);
      }
      // Service bodies are JSON only; the form parser registered for the browser flows must
      // not make a form post acceptable here.
      const type = request.headers['content-type'];
      if (takesBody && type && !/^application\/json\s*(;|$)/i.test(type)) {
        throw validationError('content type must be application/json');
      }
    };
    const own = route.onRequest;
    route.onRequest = [authorize, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])];
  });

  // A callback hook: on the requests that carry no service token it costs one check.
  app.addHook('onResponse', (request, reply, done) => {
    const audit = request.audit;
    if (audit !== null) {
      // `routeOptions` is a getter that builds a fresh object: read it once.
      const { config, url } = request.routeOptions;
      const failed = reply.statusCode >= 400;
      if (failed || !config.auditedInTransaction) {
        const pathId = (request.params as { id?: string } | undefined)?.id;
        const details = audit.details;
        details.method = request.method;
        details.path = url;
        deps.audit.enqueue(actorOf(request.caller), {
          action: config.action ?? 'unknown_route',
          target_identity: audit.target ?? (pathId && isUuid(pathId) ? pathId : null),
          outcome: request.errorCode ?? (failed ? String(reply.statusCode) : 'ok'),
          details,
        });
      }
    }
    done();
  });
}
