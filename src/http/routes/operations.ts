import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { AppDeps } from '../deps.js';
import { toDomainError } from '../errors.js';
import { outboxMetrics } from '../outbox-metrics.js';
import { RequestMetrics } from '../request-metrics.js';
import { ERROR_CODES, StringEnum, json, responses } from '../schemas.js';

export const Readiness = Type.Object({
  status: StringEnum(['ok', 'unavailable']),
  error: Type.Optional(StringEnum(ERROR_CODES, { description: 'Why the database cannot serve' })),
});

/** Operational routes: no token, no cookie; no 4xx answer either. */
function operational(operationId: string, summary: string, response: Record<number, unknown>) {
  return { schema: { operationId, summary, tags: ['operations'], security: [], response } };
}

const HEALTHZ = operational(
  'healthz',
  'Liveness: the process answers',
  responses({ 200: Type.Object({ status: StringEnum(['ok']) }, { description: 'Alive' }) }, []),
);
const READYZ = operational('readyz', 'Readiness: the database answers and takes writes', {
  ...responses({ 200: json(Readiness, 'The database answers and takes writes') }, []),
  503: json(Readiness, 'The database cannot serve now'),
});
const METRICS = operational(
  'metrics',
  'Prometheus metrics',
  responses(
    {
      200: Type.Unsafe({
        description: 'Prometheus text exposition format',
        content: { 'text/plain': { schema: Type.String() } },
      }),
    },
    [],
  ),
);
const OPENAPI = operational(
  'getOpenApiDocument',
  'This OpenAPI document',
  responses(
    { 200: Type.Object({}, { additionalProperties: true, description: 'OpenAPI 3.0' }) },
    [],
  ),
);

/** Process liveness, database readiness, Prometheus metrics and the OpenAPI document. */
export function operationRoutes(app: FastifyInstance, deps: AppDeps): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requestMetrics = new RequestMetrics();
  for (const metric of requestMetrics.metrics()) registry.registerMetric(metric);
  for (const metric of outboxMetrics(deps.store, deps.outboxCounters)) {
    registry.registerMetric(metric);
  }
  for (const metric of deps.providerSignIns.metrics()) registry.registerMetric(metric);
  // On every request, so kept cheap: a callback hook (no promise per request).
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requestMetrics.record(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  app.get('/healthz', HEALTHZ, async () => ({ status: 'ok' }));

  app.get('/readyz', READYZ, async (_request, reply) => {
    try {
      await deps.store.ping();
      return { status: 'ok' };
    } catch (error) {
      const code = toDomainError(error).code;
      return reply.code(503).send({ status: 'unavailable', error: code });
    }
  });

  app.get('/metrics', METRICS, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });

  app.get('/v1/openapi.json', OPENAPI, async () => app.swagger());
}
