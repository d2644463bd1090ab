/**
 * The OpenAPI document as the real app serves it: built in-process on an in-memory SQLite
 * database and fetched with `inject`, so nothing listens. Used by the OpenAPI lint and the
 * client's code generation.
 */
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({
    SERVICE_DATABASE_URL: ':memory:',
    SERVICE_PASSWORD_PEPPER: 'openapi-document',
    SERVICE_ENCRYPTION_KEY: 'openapi-document-encryption-key',
    SERVICE_LOG_LEVEL: 'silent',
  });
  const built = await buildApp(config);
  try {
    const res = await built.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`);
    return res.json() as Record<string, unknown>;
  } finally {
    await built.close();
  }
}
