import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, createSession } from '../helpers/core.js';

/** Issue 11 item 10: nosniff on every answer, HSTS when the public origin is https. */
describe('security headers', () => {
  const apps: Record<string, TestApp> = {};
  beforeAll(async () => {
    apps.unset = await createTestApp('sqlite', {
      SERVICE_SESSION_CORS_ORIGINS: 'https://app.example',
    });
    apps.https = await createTestApp('sqlite', {
      SERVICE_PUBLIC_URL: 'https://id.example.org',
      SERVICE_SESSION_CORS_ORIGINS: 'https://app.example',
    });
    apps.http = await createTestApp('sqlite', { SERVICE_PUBLIC_URL: 'http://id.example.org' });
  });
  afterAll(async () => {
    for (const app of Object.values(apps)) await app.close();
  });

  /** One request of each kind of answer: handlers, hooks that answer, error paths, pages. */
  async function answers(t: TestApp): Promise<[string, number, Record<string, unknown>][]> {
    const token = await t.token('introspect');
    const session = await createSession(t, (await createIdentity(t)).id);
    const requests: Record<string, InjectOptions> = {
      healthz: { method: 'GET', url: '/healthz' },
      'verify ok': {
        method: 'POST',
        url: '/v1/sessions/verify',
        headers: { authorization: `Bearer ${token}` },
        payload: { token: session.token },
      },
      'verify without token': { method: 'POST', url: '/v1/sessions/verify', payload: {} },
      'whoami without cookie': { method: 'GET', url: '/v1/whoami' },
      'unknown route': { method: 'GET', url: '/v1/nothing-here' },
      'malformed JSON': {
        method: 'POST',
        url: '/v1/sessions/verify',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: '{',
      },
      'undecodable path': { method: 'GET', url: '/v1/identities/%ff' },
      'login page': { method: 'GET', url: '/v1/login', headers: { accept: 'text/html' } },
      preflight: {
        method: 'OPTIONS',
        url: '/v1/whoami',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
      },
      openapi: { method: 'GET', url: '/v1/openapi.json' },
    };
    const results: [string, number, Record<string, unknown>][] = [];
    for (const [name, request] of Object.entries(requests)) {
      const res = await t.inject(request);
      results.push([name, res.statusCode, res.headers]);
    }
    return results;
  }

  it('every answer carries nosniff, and no HSTS without an https public URL', async () => {
    for (const t of [apps.unset!, apps.http!]) {
      for (const [name, , headers] of await answers(t)) {
        expect(headers['x-content-type-options'], name).toBe('nosniff');
        expect(headers['strict-transport-security'], name).toBeUndefined();
      }
    }
  });

  it('with an https SERVICE_PUBLIC_URL every answer carries HSTS as well', async () => {
    const results = await answers(apps.https!);
    expect(results.map(([name, status]) => [name, status])).toEqual([
      ['healthz', 200],
      ['verify ok', 200],
      ['verify without token', 401],
      ['whoami without cookie', 401],
      ['unknown route', 404],
      ['malformed JSON', 422],
      ['undecodable path', 404],
      ['login page', 200],
      ['preflight', 204],
      ['openapi', 200],
    ]);
    for (const [name, , headers] of results) {
      expect(headers['x-content-type-options'], name).toBe('nosniff');
      expect(headers['strict-transport-security'], name).toBe('max-age=31536000');
    }
  });
});
