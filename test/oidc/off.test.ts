import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { sweep } from '../../src/domain/sweep.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';

const PATHS = [
  '/.well-known/openid-configuration',
  '/oidc/.well-known/openid-configuration',
  '/auth',
  '/token',
  '/jwks',
  '/me',
  '/session/end',
  '/token/revocation',
  '/token/introspection',
  '/interaction/x',
  '/oidc/auth',
  '/oidc/token',
  '/oidc/jwks',
  '/oidc/interaction/x',
];

/** SERVICE_OIDC_ISSUER unset: no OIDC route answers and nothing OIDC is read or written. */
describeEachDatabase('OIDC off', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t?.close());

  it('answers every provider path with the plain 404', async () => {
    expect(t.app.oidc).toBeNull();
    for (const url of PATHS) {
      for (const method of ['GET', 'POST'] as const) {
        const res = await t.inject({ method, url });
        expect([url, res.statusCode, res.json()]).toEqual([url, 404, { error: 'not_found' }]);
      }
    }
    const document = (await t.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(document.paths).filter((path) => !path.startsWith('/v1/'))).toEqual(
      Object.keys(document.paths).filter((path) =>
        ['/healthz', '/readyz', '/metrics'].includes(path),
      ),
    );
  });

  it('leaves the OIDC tables alone: no key is made and the sweep does not touch them', async () => {
    await t.inject({ method: 'GET', url: '/oidc/jwks' });
    expect(await t.deps.store.listSigningKeys()).toEqual([]);
    expect(Object.keys(await sweep(t.deps.store, t.deps.clock))).toEqual([
      'sessions',
      'flows',
      'rate_limits',
      'webauthn_challenges',
      'mail_codes',
      'provider_authorizations',
      'recovery_flows',
    ]);
  });
});

it('accepts only a usable issuer URL', () => {
  const issuer = (value: string, env: Record<string, string> = {}) =>
    loadConfig({ SERVICE_OIDC_ISSUER: value, ...env }).oidcIssuer;
  expect(issuer('https://id.example.com/oidc')).toBe('https://id.example.com/oidc');
  expect(issuer('https://id.example.com')).toBe('https://id.example.com');
  expect(issuer('')).toBeNull();
  for (const bad of [
    'id.example.com',
    'ftp://id.example.com',
    'https://id.example.com/oidc/',
    'https://id.example.com/',
    'https://id.example.com/oidc?x=1',
    'https://id.example.com/oidc#x',
    'https://user:pw@id.example.com/oidc',
    'https://id.example.com/v1/oidc',
  ]) {
    expect(() => issuer(bad), bad).toThrow(ConfigError);
  }
  expect(() =>
    issuer('https://id.example.com/oidc', { SERVICE_PUBLIC_URL: 'https://other.example.com' }),
  ).toThrow(/SERVICE_PUBLIC_URL/);
});
