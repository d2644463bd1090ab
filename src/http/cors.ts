import cookie from '@fastify/cookie';
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from './deps.js';
import { corsZoneOrigins } from './origins.js';
import { browserSessionRoutes } from './routes/browser-session.js';
import { loginFlowRoutes } from './routes/login-flows.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Per-route options of @fastify/cors, merged over the plugin's own. */
    cors?: FastifyCorsOptions;
  }
}

/** API-DECISIONS 2: the browser endpoints by zone, as route URLs. */
const ZONE_ROUTES = {
  session: ['/v1/whoami', '/v1/logout'],
  credentials: ['/v1/login', '/v1/flows/:id', '/v1/flows/:id/password'],
} as const;

/** Echoes the request's origin when it is listed; any other origin gets no CORS header. */
function listedOrigin(origins: readonly string[]): FastifyCorsOptions {
  const listed = new Set(origins);
  return {
    origin: (origin, callback) => callback(null, origin !== undefined && listed.has(origin)),
  };
}

/**
 * The browser endpoints with their two CORS zones (API-DECISIONS 2). Registered as one
 * encapsulated plugin, so the CORS hook runs for these routes only and service endpoints
 * never carry a CORS header. An allowed origin gets its own origin echoed with
 * credentials; any other origin gets nothing.
 *
 * Each zone route names its allowed origins in its config, so the plugin's options are
 * normalized once at start-up instead of on every whoami. Preflights need routes of their
 * own: a zone path's OPTIONS route carries the zone and answers 404 when the origin is not
 * allowed; every other OPTIONS reaches the plugin's catch-all, which (origin `false`)
 * answers 404 too: outside the zones there is no such resource for a browser.
 *
 * The cookie plugin lives in this scope too: service endpoints never read or set a cookie,
 * so they skip its parse and its onSend hook.
 */
export async function browserEndpoints(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const origins = corsZoneOrigins(deps.config);
  const zoneOptions = new Map<string, FastifyCorsOptions>();
  for (const url of ZONE_ROUTES.session) zoneOptions.set(url, listedOrigin(origins.session));
  for (const url of ZONE_ROUTES.credentials) {
    zoneOptions.set(url, listedOrigin(origins.credentials));
  }

  app.addHook('onRoute', (route) => {
    const zone = zoneOptions.get(route.url);
    if (zone) route.config = { ...route.config, cors: zone };
  });

  await app.register(cookie);
  await app.register(cors, {
    hook: 'onRequest',
    origin: false,
    credentials: true,
    methods: ['GET', 'POST'],
    allowedHeaders: ['Content-Type'],
    maxAge: 600,
    // Without it a preflight lacking Access-Control-Request-Method gets a text/plain 400
    // outside the error model; such a request is answered like any other allowed one.
    strictPreflight: false,
  });

  for (const url of zoneOptions.keys()) {
    app.options(url, { schema: { hide: true } }, (_request, reply) => reply.callNotFound());
  }
  loginFlowRoutes(app, deps);
  browserSessionRoutes(app, deps);
}
