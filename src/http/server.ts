import formbody from '@fastify/formbody';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { DomainError } from '../domain/errors.js';
import { registerAccessLog } from './access-log.js';
import { assetRoutes } from './assets.js';
import { browserEndpoints } from './cors.js';
import type { AppDeps } from './deps.js';
import { clientErrorHandler } from './client-errors.js';
import { handleError, sendError } from './errors.js';
import { frameworkErrors } from './framework-errors.js';
import { registerOpenApi } from './openapi.js';
import { directAuthRoutes } from './routes/direct-auth.js';
import { identityRoutes } from './routes/identities.js';
import { identityCredentialRoutes } from './routes/identity-credentials.js';
import { identityPasskeyRoutes } from './routes/identity-passkeys.js';
import { linkRoutes } from './routes/links.js';
import { secondFactorAdminRoutes } from './routes/second-factor-admin.js';
import { operationRoutes } from './routes/operations.js';
import { sessionRoutes } from './routes/sessions.js';
import { echoRequestId, requestIds } from './request-id.js';
import { requestLog } from './request-log.js';
import { securityHeaders, securityHeadersHook } from './security-headers.js';
import { refusalOfCaller, presentedCaller, registerServiceAuth } from './service-auth.js';
import { Transport } from './transport.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    /** Drains and closes the server within `timeoutMs` (docs/operations.md, "Shutdown"). */
    shutdown(timeoutMs: number): Promise<void>;
  }
}

export interface ServerOptions {
  /** Called before any route is added: tests install their checking hooks here. */
  instrument?: (app: FastifyInstance) => void;
  /**
   * Fastify's schema compilers. A process building many servers (the test suite) shares
   * compiled schemas between them with its own; the service runs Fastify's.
   */
  compilersFactory?: NonNullable<FastifyServerOptions['schemaController']>['compilersFactory'];
}

export async function buildServer(
  deps: AppDeps,
  logger: FastifyBaseLogger,
  options: ServerOptions = {},
): Promise<FastifyInstance> {
  const headers = securityHeaders(deps.config);
  const transport = new Transport(deps, headers);
  const app = Fastify({
    // Answers below the routes stay in the error model too (docs/errors.md).
    serverFactory: transport.serverFactory,
    clientErrorHandler: clientErrorHandler(headers),
    frameworkErrors: frameworkErrors(deps, headers),
    // The transport refuses requests during the drain itself (503 `unavailable`, audited).
    return503OnClosing: false,
    loggerInstance: logger,
    genReqId: requestIds(),
    // Fastify's request logging is off: our access log (SERVICE_ACCESS_LOG) writes one line
    // per request when an operator asks for it; errors and 5xx are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLog,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: false,
    ajv: {
      // Strict input: no type coercion, unknown fields rejected by the schemas themselves.
      // Fastify hands these to a `compilersFactory`'s validator compiler too.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false },
    },
    ...(options.compilersFactory
      ? { schemaController: { compilersFactory: options.compilersFactory } }
      : {}),
  });

  // Many clients send `Content-Type: application/json` with no body on body-less calls
  // (revoke-sessions, logout). An empty body is then "no body"; routes that need one still
  // answer 422 through their schema. Everything else keeps Fastify's safe JSON parser.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    return parseJson(request, body as string, done);
  });

  echoRequestId(app);
  if (deps.config.accessLog) registerAccessLog(app, logger);
  app.decorateRequest('errorCode', null);
  app.decorate('shutdown', (timeoutMs: number) => transport.shutdown(app, timeoutMs));
  app.addHook('onRequest', securityHeadersHook(headers));
  app.setErrorHandler(async (error, request, reply) =>
    handleError(await refusalOfCaller(deps, request, error), request, reply),
  );
  app.setNotFoundHandler(async (request, reply) => {
    // An unknown route answers 404 whatever the token, but a presented token is audited.
    if (request.headers.authorization !== undefined) {
      await presentedCaller(deps, request).catch(() => undefined);
    }
    return sendError(request, reply, new DomainError('not_found'));
  });

  options.instrument?.(app);
  await registerOpenApi(app);
  await app.register(formbody, { bodyLimit: BODY_LIMIT_BYTES });

  registerServiceAuth(app, deps);
  operationRoutes(app, deps);
  identityRoutes(app, deps);
  identityCredentialRoutes(app, deps);
  sessionRoutes(app, deps);
  directAuthRoutes(app, deps);
  linkRoutes(app, deps);
  secondFactorAdminRoutes(app, deps);
  identityPasskeyRoutes(app, deps);
  assetRoutes(app);
  await app.register((browser) => browserEndpoints(browser, deps));
  // Only with SERVICE_OIDC_ISSUER: otherwise no route and no table of its own is touched.
  if (deps.config.oidcIssuer !== null) {
    const { oidcEndpoints } = await import('./oidc/routes.js');
    await oidcEndpoints(app, deps);
  } else {
    app.decorate('oidc', null);
  }
  await app.ready();
  return app;
}
