import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { auditSince, createIdentity, createSession, expectError } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

const CORE_PATHS: Record<string, string[]> = {
  '/v1/identities/{id}': ['get'],
  '/v1/identities': ['get'],
  '/v1/identities/{id}/profile': ['patch'],
  '/v1/identities/{id}/revoke-sessions': ['post'],
  '/v1/register': ['post'],
  '/v1/register-and-authenticate': ['post'],
  '/v1/authenticate/password': ['post'],
  '/v1/sessions/verify': ['post'],
  '/v1/sessions/revoke': ['post'],
};

describeEachDatabase('operational endpoints and routing', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t?.close());

  it('GET /healthz answers 200 without a token', async () => {
    const res = await t.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 while the database is reachable', async () => {
    const res = await t.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /metrics is Prometheus text counting requests by route and status', async () => {
    await t.inject({ method: 'GET', url: '/healthz' });
    const res = await t.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toContain('# TYPE tessera_http_requests_total counter');
    expect(res.body).toMatch(
      /tessera_http_requests_total\{route="\/healthz",method="GET",status="200"\} [1-9]/,
    );
    expect(res.body).toContain('tessera_http_request_duration_seconds_bucket');
  });

  it('GET /v1/openapi.json is an OpenAPI 3 document listing every core path', async () => {
    const res = await t.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json() as {
      openapi: string;
      info: { title: string };
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info.title).toBe('Tessera');
    for (const [path, methods] of Object.entries(CORE_PATHS)) {
      for (const method of methods) {
        expect(doc.paths[path]?.[method], `${method} ${path}`).toBeDefined();
        expect(Object.keys(doc.paths[path]![method]!.responses)).toContain('401');
      }
    }
    expect(Object.keys(doc.paths['/v1/register']!.post!.responses)).toEqual(
      expect.arrayContaining(['201', '409', '422']),
    );
    // Operational routes are described too, under their own tag and without credentials.
    expect(doc.paths['/healthz']).toMatchObject({ get: { tags: ['operations'], security: [] } });
  });

  describe('unknown routes and methods', () => {
    it.each([
      ['GET', '/v1/nothing-here'],
      ['GET', '/'],
      ['DELETE', '/v1/register'],
      ['PUT', '/v1/identities/0190c7f8-0000-7000-8000-000000000000'],
      ['GET', '/v1/sessions/verify'],
      ['POST', '/v2/register'],
    ] as const)('%s %s is 404 not_found', async (method, url) => {
      expectError(await t.inject({ method, url }), 404, 'not_found');
    });

    it('HEAD on a service route needs the token like GET', async () => {
      const identity = await createIdentity(t);
      const res = await t.inject({ method: 'HEAD', url: `/v1/identities/${identity.id}` });
      expect(res.statusCode).toBe(401);
    });

    it('a request presenting a token to an unknown route is still audited', async () => {
      const token = await t.token('identity_read');
      const before = (await auditSince(t, 0)).length;
      expectError(await t.call('GET', '/v1/nothing-here', token), 404, 'not_found');
      const rows = await auditSince(t, before);
      expect(rows).toEqual([
        expect.objectContaining({
          action: 'unknown_route',
          service_name: expect.any(String),
          outcome: 'not_found',
        }),
      ]);
    });
  });

  it('verify answers without Cache-Control or ETag', async () => {
    const token = await t.token('introspect');
    const session = await createSession(t, (await createIdentity(t)).id);
    const res = await t.call('POST', '/v1/sessions/verify', token, { token: session.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['last-modified']).toBeUndefined();
  });
});
