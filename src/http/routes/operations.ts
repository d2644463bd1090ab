import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AppDeps } from '../deps.js';
import { toDomainError } from '../errors.js';

/** Process liveness, database readiness, Prometheus metrics and the OpenAPI document. */
export function operationRoutes(app: FastifyInstance, deps: AppDeps): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'tessera_http_requests_total',
    help: 'HTTP requests answered, by route, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'tessera_http_request_duration_seconds',
    help: 'Time to answer, by route',
    labelNames: ['route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });

  // On every request, so kept cheap: a callback hook (no promise per request) and the
  // labelled children looked up once per (route, method, status) instead of hashing a
  // label object on each call. The set of keys is bounded by the route table.
  const series = new Map<string, { count: () => void; time: (seconds: number) => void }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = series.get(key);
    if (!child) {
      const counter = requests.labels(route, request.method, String(reply.statusCode));
      const histogram = duration.labels(route);
      child = { count: () => counter.inc(), time: (seconds) => histogram.observe(seconds) };
      series.set(key, child);
    }
    child.count();
    child.time(reply.elapsedTime / 1000);
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
