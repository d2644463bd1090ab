import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { DomainError } from '../domain/errors.js';
import { registerAccessLog } from './access-log.js';
import { browserEndpoints } from './cors.js';
import type { AppDeps } from './deps.js';
import { handleError, sendError } from './errors.js';
import { directAuthRoutes } from './routes/direct-auth.js';
import { identityRoutes } from './routes/identities.js';
import { linkRoutes } from './routes/links.js';
import { operationRoutes } from './routes/operations.js';
import { sessionRoutes } from './routes/sessions.js';
import { echoRequestId, requestIds } from './request-id.js';
import { requestLog } from './request-log.js';
import { presentedCaller, registerServiceAuth } from './service-auth.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

export async function buildServer(
  deps: AppDeps,
  logger: FastifyBaseLogger,
): Promise<FastifyInstance> {
  const app = Fastify({
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
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false },
    },
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
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(async (request, reply) => {
    // An unknown route answers 404 whatever the token, but a presented token is audited.
    if (request.headers.authorization !== undefined) {
      await presentedCaller(deps.store, request).catch(() => undefined);
    }
    return sendError(request, reply, new DomainError('not_found'));
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'Tessera', version: '1', description: 'Identity and session service' },
      components: {
        securitySchemes: { serviceToken: { type: 'http', scheme: 'bearer' } },
      },
    },
  });
  await app.register(formbody, { bodyLimit: BODY_LIMIT_BYTES });

  registerServiceAuth(app, deps);
  operationRoutes(app, deps);
  identityRoutes(app, deps);
  sessionRoutes(app, deps);
  directAuthRoutes(app, deps);
  linkRoutes(app, deps);
  await app.register((browser) => browserEndpoints(browser, deps));
  await app.ready();
  return app;
}
