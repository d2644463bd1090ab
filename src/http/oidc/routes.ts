import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.js';
import type { AppDeps } from '../deps.js';
import { errorBody, refusalOf, ERROR_STATUS } from '../errors.js';
import { OidcHost } from './host.js';
import { interactionRoutes } from './interactions.js';

/**
 * The provider's endpoints under the issuer's path (docs/oidc.md, "Endpoints"). Exact paths,
 * not a wildcard: any other path stays Tessera's 404 in the error model.
 */
const PROVIDER_PATHS = [
  '/.well-known/openid-configuration',
  '/auth',
  '/auth/:uid',
  '/token',
  '/token/introspection',
  '/token/revocation',
  '/me',
  '/jwks',
  '/request',
  '/session/end',
  '/session/end/confirm',
  '/session/end/success',
];

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenID Connect provider, when SERVICE_OIDC_ISSUER is set. */
    oidc: OidcHost | null;
  }
}

/**
 * Mounts the OpenID Connect provider on Tessera's server when SERVICE_OIDC_ISSUER is set.
 * Its protocol endpoints are handed to oidc-provider whole (`reply.hijack()`): it reads
 * its own bodies and writes its own answers, OAuth's error model rather than Tessera's.
 */
export async function oidcEndpoints(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const issuer = deps.config.oidcIssuer;
  if (issuer === null) return;
  const host = new OidcHost(deps, issuer);
  app.decorate('oidc', host);

  await app.register(async (protocol) => {
    // The provider parses its own bodies: the stream is left unread for it.
    protocol.removeAllContentTypeParsers();
    protocol.addContentTypeParser('*', (_request, _payload, done) => done(null));
    for (const path of PROVIDER_PATHS) {
      protocol.route({
        method: ['GET', 'POST', 'OPTIONS'],
        url: `${host.prefix}${path}`,
        schema: { hide: true },
        async handler(request, reply) {
          reply.hijack();
          const res = reply.raw;
          // Tessera's own headers on every answer (nosniff, HSTS, the request id).
          for (const [name, value] of Object.entries(reply.getHeaders())) {
            if (value !== undefined) res.setHeader(name, value as string);
          }
          try {
            await host.handle(request.raw, res);
          } catch (error) {
            // The provider answers its own errors; this is one it could not start for
            // (the database unreachable while it loads its keys).
            let domain = refusalOf(error);
            if (!domain) {
              request.log.error({ err: error }, 'unhandled error');
              domain = new DomainError('unavailable');
            }
            if (res.headersSent) return void res.end();
            res.statusCode = ERROR_STATUS[domain.code];
            res.setHeader('content-type', 'application/json; charset=utf-8');
            res.end(JSON.stringify(errorBody(domain)));
          }
        },
      });
    }
  });

  await app.register(async (pages) => {
    await pages.register(cookie);
    interactionRoutes(pages, deps, host);
  });
}
