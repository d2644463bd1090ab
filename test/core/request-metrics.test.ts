import { Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { RequestMetrics } from '../../src/http/request-metrics.js';

it('exposes the request counter and a cumulative histogram through a prom-client registry', async () => {
  const metrics = new RequestMetrics();
  const registry = new Registry();
  for (const metric of metrics.metrics()) registry.registerMetric(metric);
  metrics.record('/v1/whoami', 'GET', 200, 0.0005); // on a bound: counted in that bucket
  metrics.record('/v1/whoami', 'GET', 200, 0.003);
  metrics.record('/v1/whoami', 'GET', 401, 7); // beyond every bound: +Inf only
  const text = await registry.metrics();
  expect(text).toContain('# TYPE tessera_http_requests_total counter');
  expect(text).toContain(
    'tessera_http_requests_total{route="/v1/whoami",method="GET",status="200"} 2',
  );
  expect(text).toContain(
    'tessera_http_requests_total{route="/v1/whoami",method="GET",status="401"} 1',
  );
  expect(text).toContain('# TYPE tessera_http_request_duration_seconds histogram');
  const bucket = (le: string) =>
    new RegExp(
      `tessera_http_request_duration_seconds_bucket\\{route="/v1/whoami",le="${le}"\\} (\\d+)`,
    ).exec(text)?.[1];
  expect(bucket('0.0005')).toBe('1');
  expect(bucket('0.0025')).toBe('1');
  expect(bucket('0.005')).toBe('2');
  expect(bucket('2.5')).toBe('2');
  expect(bucket('\\+Inf')).toBe('3');
  expect(text).toContain('tessera_http_request_duration_seconds_count{route="/v1/whoami"} 3');
  expect(text).toMatch(/tessera_http_request_duration_seconds_sum\{route="\/v1\/whoami"\} 7\.0035/);
});
