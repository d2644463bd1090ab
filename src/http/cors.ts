import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../domain/errors.js';
import type { AppDeps } from './deps.js';
import { sendError } from './errors.js';
import { corsZoneOrigins } from './origins.js';
import { browserSessionRoutes } from './routes/browser-session.js';
import { loginFlowRoutes } from './routes/login-flows.js';

type Zone = 'session' | 'credentials';

const SESSION_ZONE = /^\/v1\/(?:whoami|logout)$/;
const CREDENTIAL_ZONE = /^\/v1\/(?:login|flows\/[^/?#]+(?:\/password)?)$/;

/**
 * By path, not by route: a preflight is answered by the CORS plugin's catch-all OPTIONS
 * route, which knows nothing of the route the browser is asking about.
 */
function zoneOf(url: string): Zone | null {
  const path = url.split('?')[0] ?? '';
  if (SESSION_ZONE.test(path)) return 'session';
  if (CREDENTIAL_ZONE.test(path)) return 'credentials';
  return null;
}

/**
 * The browser endpoints with their two CORS zones (API-DECISIONS 2). Registered as one
 * encapsulated plugin, so the CORS hooks run for these routes only and service endpoints
 * never carry a CORS header. An allowed origin gets its own origin echoed with
 * credentials; any other origin gets nothing.
 */
export async function browserEndpoints(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const origins = corsZoneOrigins(deps.config);

  // The plugin's catch-all OPTIONS route would otherwise answer preflights for every path;
  // outside the zones there is no such resource for a browser.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method === 'OPTIONS' && zoneOf(request.url) === null) {
      return sendError(request, reply, notFound());
    }
  });

  await app.register(cors, {
    hook: 'onRequest',
    // Without it a preflight lacking Access-Control-Request-Method gets a text/plain 400
    // outside the error model; such a request is answered like any other allowed one.
    strictPreflight: false,
    delegator: (request, callback) => {
      const zone = zoneOf(request.url);
      const origin = request.headers.origin;
      if (zone === null || origin === undefined || !origins[zone].includes(origin)) {
        return callback(null, { origin: false });
      }
      callback(null, {
        origin,
        credentials: true,
        methods: ['GET', 'POST'],
        allowedHeaders: ['Content-Type'],
        maxAge: 600,
      });
    },
  });

  loginFlowRoutes(app, deps);
  browserSessionRoutes(app, deps);
}
