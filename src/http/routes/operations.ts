import type { FastifyInstance } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { AppDeps } from '../deps.js';
import { toDomainError } from '../errors.js';
import { RequestMetrics } from '../request-metrics.js';

/** Process liveness, database readiness, Prometheus metrics and the OpenAPI document. */
export function operationRoutes(app: FastifyInstance, deps: AppDeps): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requestMetrics = new RequestMetrics();
  for (const metric of requestMetrics.metrics()) registry.registerMetric(metric);
  // On every request, so kept cheap: a callback hook (no promise per request).
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requestMetrics.record(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  const hidden = { schema: { hide: true } };
  app.get('/healthz', hidden, async () => ({ status: 'ok' }));

  app.get('/readyz', hidden, async (_request, reply) => {
    try {
      await deps.store.ping();
      return { status: 'ok' };
    } catch (error) {
      const code = toDomainError(error).code;
      return reply.code(503).send({ status: 'unavailable', error: code });
    }
  });

  app.get('/metrics', hidden, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics());
  });

  app.get('/v1/openapi.json', hidden, async () => app.swagger());
}
