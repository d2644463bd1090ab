import { adminRoutes } from './admin-page/routes.js';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { AppDeps } from './deps.js';
import { SECOND_FACTOR_SURFACES, flowMethodUrl, flowMethodUrls } from './flow-methods.js';
import { isFormPost, prefersHtml } from './login-page/respond.js';
import { corsZoneOrigins } from './origins.js';
import { NoContent, responses } from './schemas.js';
import { accountRoutes } from './routes/account.js';
import { accountEmailRoutes } from './routes/account-email.js';
import { verificationRoutes } from './routes/verification.js';
import { recoveryRoutes } from './routes/recovery.js';
import { browserSessionRoutes } from './routes/browser-session.js';
import { accountPasskeyRoutes } from './routes/account-passkeys.js';
import { loginFlowRoutes } from './routes/login-flows.js';
import { accountTwoFactorRoutes } from './routes/account-two-factor.js';
import { secondFactorFlowRoutes } from './routes/second-factor-flows.js';
import { providerRoutes } from './routes/providers.js';
import { accountConnectionRoutes } from './routes/account-connections.js';
import { REGISTRATION_URLS, registrationRoutes } from './routes/registration.js';

/** docs/browser-sign-in.md: the browser endpoints by zone, as route URLs; a flow takes every method's. */
const ZONE_ROUTES = {
  session: ['/v1/whoami', '/v1/logout'],
  credentials: [
    '/v1/login',
    '/v1/flows/:id',
    ...flowMethodUrls(),
    ...SECOND_FACTOR_SURFACES.map(({ method }) => flowMethodUrl(method.id)),
    '/v1/verification',
    '/v1/verification/:id',
    '/v1/verification/:id/resend',
    '/v1/flows/:id/provider',
    '/v1/recovery',
    '/v1/recovery/:id',
    '/v1/recovery/:id/email',
    '/v1/recovery/:id/resend',
    '/v1/recovery/:id/code',
  ],
  /** The account JSON API (docs/account.md); the page itself is not read cross-origin. */
  account: [
    '/v1/account/profile',
    '/v1/account/password',
    '/v1/account/sessions',
    '/v1/account/sessions/:id',
    '/v1/account/sessions/:id/revoke',
    '/v1/account/sessions/revoke-others',
    '/v1/account/email',
    '/v1/account/connections',
    '/v1/account/connections/:provider/connect',
    '/v1/account/connections/:provider/disconnect',
  ],
  /**
   * The passkey and two-factor JSON routes (docs/passkeys.md, docs/two-factor.md), in the
   * account zone too. Two of these paths also serve a hosted page: that answer stays unread
   * cross-origin.
   */
  accountCredentials: [
    '/v1/account/passkeys',
    '/v1/account/passkeys/options',
    '/v1/account/passkeys/:id',
    '/v1/account/two-factor',
    '/v1/account/two-factor/totp',
    '/v1/account/two-factor/totp/confirm',
    '/v1/account/two-factor/recovery-codes',
    '/v1/account/two-factor/disable',
  ],
} as const;

interface Preflight {
  methods: string;
  headers: string;
}

interface ZoneOptions {
  preflight?: Preflight;
  /** Response headers the listed origin's script may read. */
  expose?: string;
  /** A request answered with a page: no CORS header, whatever its origin. */
  page?: (request: FastifyRequest) => boolean;
}

const FLOW_PREFLIGHT: Preflight = { methods: 'GET, POST', headers: 'Content-Type' };
/** The account API's writes are PATCH and DELETE too, and carry their CSRF token in a header. */
const ACCOUNT_PREFLIGHT: Preflight = {
  methods: 'GET, POST, PATCH, DELETE',
  headers: 'Content-Type, X-CSRF-Token',
};

/**
 * One zone's CORS: a listed origin is echoed with credentials, any other origin (or none)
 * gets no `Access-Control-*` header. A listed origin's preflight is answered here (204);
 * any other preflight goes on to the zone path's OPTIONS route, which answers 404.
 *
 * Hand-written rather than @fastify/cors: the plugin merges its options object with the
 * route's on every request and parses Vary, 4-6 µs more per whoami than this hook in an
 * in-process A/B (whoami costs 65-70 µs of CPU in `npm run bench`), for what is here a set
 * lookup and a few headers.
 */
function corsZone(
  origins: readonly string[],
  { preflight = FLOW_PREFLIGHT, expose, page }: ZoneOptions = {},
): onRequestHookHandler {
  const listed = new Set(origins);
  return function answerCors(request, reply, done) {
    // The answer depends on Origin whatever it is: shared caches must key on it.
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin === undefined || !listed.has(origin)) return done();
    if (page?.(request)) return done();
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-allow-credentials', 'true');
    if (request.method !== 'OPTIONS') {
      if (expose) reply.header('access-control-expose-headers', expose);
      return done();
    }
    reply
      .header('access-control-allow-methods', preflight.methods)
      .header('access-control-allow-headers', preflight.headers)
      .header('access-control-max-age', '600')
      .header('content-length', '0')
      .code(204)
      .send();
  };
}

/** The hosted pages behind the same paths: a browser navigating, or a plain form post. */
function answersPage(request: FastifyRequest): boolean {
  if (request.method === 'OPTIONS') return false;
  return request.method === 'GET' ? prefersHtml(request) : isFormPost(request);
}

/**
 * The browser endpoints with their three CORS zones (docs/browser-sign-in.md), registered as one
 * encapsulated plugin. Each zone route, and its OPTIONS route, gets its zone's hook; the
 * other browser routes and every service endpoint carry no CORS header, and a preflight
 * for them finds no OPTIONS route and answers 404: there is no such resource for a browser.
 *
 * The cookie plugin lives in this scope too: service endpoints never read or set a cookie,
 * so they skip its parse and its onSend hook.
 */
export async function browserEndpoints(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const origins = corsZoneOrigins(deps.config);
  const zones = new Map<string, onRequestHookHandler>();
  const session = corsZone(origins.session);
  const credentials = corsZone(origins.credentials);
  for (const url of ZONE_ROUTES.session) zones.set(url, session);
  for (const url of ZONE_ROUTES.credentials) zones.set(url, credentials);
  const account = corsZone(origins.account, { preflight: ACCOUNT_PREFLIGHT });
  for (const url of ZONE_ROUTES.account) zones.set(url, account);
  // GET /v1/account/passkeys answers its CSRF token in a header, which a script elsewhere
  // reads only if exposed.
  const accountCredentials = corsZone(origins.account, {
    preflight: ACCOUNT_PREFLIGHT,
    expose: 'X-CSRF-Token',
    page: answersPage,
  });
  for (const url of ZONE_ROUTES.accountCredentials) zones.set(url, accountCredentials);
  // Closed, the sign-up routes answer as unknown ones: no CORS either (docs/registration.md).
  if (deps.config.registration.open) {
    for (const url of REGISTRATION_URLS) zones.set(url, credentials);
  }

  app.addHook('onRoute', (route) => {
    const zone = zones.get(route.url);
    if (!zone) return;
    const own = route.onRequest;
    route.onRequest = [zone, ...(own === undefined ? [] : Array.isArray(own) ? own : [own])];
  });

  await app.register(cookie);
  // Preflights are not API operations: declared (for the test check), not documented. A
  // preflight that carries a body the parser refuses answers 422 like any request.
  const preflight = {
    hide: true,
    response: responses({ 204: NoContent('A listed origin') }, [404, 422]),
  };
  for (const url of zones.keys()) {
    app.options(url, { schema: preflight }, (_request, reply) => reply.callNotFound());
  }
  loginFlowRoutes(app, deps);
  secondFactorFlowRoutes(app, deps);
  accountTwoFactorRoutes(app, deps);
  browserSessionRoutes(app, deps);
  accountRoutes(app, deps);
  accountEmailRoutes(app, deps);
  verificationRoutes(app, deps);
  accountPasskeyRoutes(app, deps);
  await adminRoutes(app, deps);
  providerRoutes(app, deps);
  accountConnectionRoutes(app, deps);
  recoveryRoutes(app, deps);
  registrationRoutes(app, deps);
}
