import { createServer } from 'node:net';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import { createOidcClient, type NewOidcClient } from '../../src/domain/oidc/client-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { DatabaseKind, TestDatabase } from '../helpers/databases.js';

export const PASSWORD = 'correct horse battery';
const TEST_ACTOR = { service_name: 'oidc-tests', service_id: null };

/** A port nobody listens on now: the issuer URL must be known before the app is built. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface OidcApp extends TestApp {
  origin: string;
  issuer: string;
}

/**
 * A Tessera with OIDC on, listening on 127.0.0.1. `issuerPort` names the instance the
 * issuer URL points at (a second instance behind the same issuer passes the first's).
 */
export async function startOidcApp(
  kind: DatabaseKind,
  options: { db?: TestDatabase; issuerPort?: number; env?: Record<string, string> } = {},
): Promise<OidcApp> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${options.issuerPort ?? port}/oidc`;
  const t = await createTestApp(kind, { SERVICE_OIDC_ISSUER: issuer, ...options.env }, options.db);
  await t.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(t, { origin: `http://127.0.0.1:${port}`, issuer });
}

export async function addUser(t: TestApp, username = 'alice') {
  return registerIdentity(t.deps, TEST_ACTOR, {
    username,
    password: PASSWORD,
    display_name: `${username[0]!.toUpperCase()}${username.slice(1)} Example`,
    avatar_url: `https://img.example/${username}.png`,
  });
}

export function addClient(t: TestApp, input: Partial<NewOidcClient> & { redirectUris: string[] }) {
  return createOidcClient(t.deps, TEST_ACTOR, { name: 'Test app', ...input });
}
