import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { SESSION_COOKIE } from './cookies.js';
import { addSharedSchemas } from './schemas.js';

const TAGS = [
  { name: 'identities', description: 'Identities: registration, lookup, profile' },
  { name: 'sessions', description: 'Sessions: password sign-in, verification, revocation' },
  { name: 'links', description: 'External accounts (provider, subject) linked to identities' },
  { name: 'flows', description: 'Browser login flows and the hosted login page' },
  { name: 'browser', description: 'The browser session in the service_session cookie' },
  { name: 'operations', description: 'Liveness, readiness, metrics and this document' },
];

/**
 * `GET /v1/openapi.json`, generated from the route schemas. A route's service grant
 * (`config.grant`) is what makes it a service route, so the bearer requirement is derived
 * from it here rather than restated per route: no service route can be left without it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  addSharedSchemas(app);
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Tessera',
        version: '1',
        description: 'Identity and session service',
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      servers: [{ url: '/', description: 'This Tessera' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          serviceToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'A service token (tess_svc_…) from `tessera svc create`',
          },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: SESSION_COOKIE,
            description: 'The browser session cookie set by a completed login flow',
          },
        },
      },
    },
    // Component names are the schemas' `$id`s (the default would be `def-0`, `def-1`, …).
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    transform: ({ schema, url, route }) => {
      const grant = route.config?.grant;
      if (!grant) return { schema, url };
      const description = [schema.description, `Requires the \`${grant}\` grant.`]
        .filter(Boolean)
        .join(' ');
      return { schema: { ...schema, description, security: [{ serviceToken: [] }] }, url };
    },
  });
}
