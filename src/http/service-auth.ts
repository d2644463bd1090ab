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
    /**
     * Names the caller of a bearer token together with the route's own first read, instead
     * of a lookup of its own: from the parsed body on a route that takes one (verify: the
     * session), else from the path, before anything else (the identity lookup).
     */
    readCaller?: (request: FastifyRequest, token: string) => Promise<ServiceCaller>;
  }
  interface FastifyRequest {
    caller: ServiceCaller | null;
    /** Set once a service token was presented: every such request leaves an audit row. */
    audit: { target: string | null; details: Record<string, unknown> } | null;
    /** The bearer token whose lookup waits for the body (a route with `readCaller`). */
    awaitedToken: string | null;
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

/**
 * Reads `Authorization: Bearer …`; null when absent. A present but unusable header is
 * refused. `readCaller`, when given, names the caller instead of a lookup of its own.
 */
export async function presentedCaller(
  deps: CallerLookup,
  request: FastifyRequest,
  readCaller?: (request: FastifyRequest, token: string) => Promise<ServiceCaller>,
): Promise<ServiceCaller | null> {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  request.audit ??= { target: null, details: {} };
  request.caller = await (readCaller
    ? readCaller(request, requireBearer(header))
    : callerOf(deps, header));
  return request.caller;
}

/** The service an `Authorization` header value names; a header that names none is refused. */
export async function callerOf(deps: CallerLookup, header: string): Promise<ServiceCaller> {
  return authenticateServiceToken(deps, requireBearer(header));
}

function requireBearer(header: string): string {
  const token = bearerToken(header);
  if (token === undefined) throw new DomainError('invalid_service_token');
  return token;
}

const bearerToken = (header: string): string | undefined => /^Bearer +(\S+) *$/i.exec(header)?.[1];

const JSON_TYPE = /^application\/json\s*(;|$)/i;

function admit(request: FastifyRequest, caller: ServiceCaller, grant: Grant): void {
  request.caller = caller;
  if (!caller.grants.has(grant)) {
    throw new DomainError('forbidden', `this service token lacks the ${grant} grant`);
  }
}

/**
 * For the error handler: a request refused before its caller was looked up (a body that
 * does not parse, or one past the size limit, on a route whose caller is read with its
 * body) is answered as it was before the body: an unknown token or a missing grant first.
 */
export async function refusalOfCaller(
  deps: CallerLookup,
  request: FastifyRequest,
  error: unknown,
): Promise<unknown> {
  const token = request.awaitedToken;
  const grant = request.routeOptions.config.grant;
  if (token === null || grant === undefined) return error;
  request.awaitedToken = null;
  try {
    admit(request, await authenticateServiceToken(deps, token), grant);
    return error;
  } catch (refusal) {
    return refusal;
  }
}

/** A route's own hooks of one kind, as a list. */
const hooks = <Hook>(own: Hook | Hook[] | undefined): Hook[] =>
  own === undefined ? [] : Array.isArray(own) ? own : [own];

/**
 * Bearer authentication and the grant check run in onRequest, before the body is parsed,
 * so an unauthenticated caller learns nothing about body validation. The hook is attached
 * to the routes that declare a grant only: the browser endpoints (whoami on every page
 * view) never pay for it. Unknown routes audit a presented token in the not-found handler.
 *
 * A route with `readCaller` (verify) looks its caller up with its own first read, once the
 * JSON body is parsed, and before it is validated: one read where there were two, and the
 * answers in the same order (an unknown token, then a missing grant, then the body). What
 * can be checked without the database still is before the body: a missing, malformed or
 * wrongly checksummed token and a wrong content type are refused as on any route. A
 * well-formed token that turns out unknown has its body read first (64 KiB at most, as any
 * browser form's). A route with `readCaller` and no body (the identity lookup) makes that
 * read in place of the caller's lookup, from its path: nothing waits, nothing moves.
 */
export function registerServiceAuth(
  app: FastifyInstance,
  deps: CallerLookup & { audit: AuditLog },
): void {
  app.decorateRequest('caller', null);
  app.decorateRequest('audit', null);
  app.decorateRequest('awaitedToken', null);

  app.addHook('onRoute', (route) => {
    const grant = route.config?.grant;
    if (!grant) return;
    const takesBody = route.schema?.body !== undefined;
    const readCaller = takesBody ? route.config?.readCaller : undefined;
    const readCallerNow = takesBody ? undefined : route.config?.readCaller;
    const authorize = async (request: FastifyRequest) => {
      if (readCaller && awaitBody(request)) return;
      const caller = await presentedCaller(deps, request, readCallerNow);
      if (!caller) throw new DomainError('missing_service_token');
      admit(request, caller, grant);
      // Service bodies are JSON only; the form parser registered for the browser flows must
      // not make a form post acceptable here.
      const type = request.headers['content-type'];
      if (takesBody && type && !JSON_TYPE.test(type)) {
        throw validationError('content type must be application/json');
      }
    };
    /** Leaves the lookup of a token that passes every offline check to `readCaller`. */
    const awaitBody = (request: FastifyRequest): boolean => {
      const { authorization, 'content-type': type } = request.headers;
      const token = authorization === undefined ? undefined : bearerToken(authorization);
      if (token === undefined || !type || !JSON_TYPE.test(type)) return false;
      if (!deps.legacyTokens.accepts('service', token)) return false;
      request.audit ??= { target: null, details: {} };
      request.awaitedToken = token;
      return true;
    };
    const withBody = async (request: FastifyRequest) => {
      const token = request.awaitedToken;
      if (token === null) return;
      request.awaitedToken = null;
      admit(request, await readCaller!(request, token), grant);
    };
    route.onRequest = [authorize, ...hooks(route.onRequest)];
    if (readCaller) route.preValidation = [withBody, ...hooks(route.preValidation)];
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
