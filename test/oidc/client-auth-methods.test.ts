import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/databases.js';
import { addClient, type OidcApp, startOidcApp } from './helpers.js';

/**
 * docs/oidc.md, "Clients": a confidential client authenticates with HTTP Basic or with form
 * fields, whichever `--token-endpoint-auth-method` it was registered with (oidc-provider
 * accepts both secret methods for a client with a secret); a wrong secret fails either way.
 * Revocation of an unknown token answers 200 once the client is authenticated, so it shows
 * the authentication alone.
 */
describeEachDatabase('OIDC client secret: Basic or form fields', (kind) => {
  let t: OidcApp;
  beforeAll(async () => {
    t = await startOidcApp(kind);
  });
  afterAll(() => t?.close());

  function revoke(clientId: string, secret: string, via: 'basic' | 'post') {
    const form = new URLSearchParams({ token: 'not-a-token-of-anyone' });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
    };
    if (via === 'basic') {
      const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    } else {
      form.set('client_id', clientId);
      form.set('client_secret', secret);
    }
    return fetch(`${t.issuer}/token/revocation`, { method: 'POST', headers, body: form });
  }

  it.each(['client_secret_basic', 'client_secret_post'])(
    'a client registered with %s authenticates both ways',
    async (method) => {
      const { client, client_secret } = await addClient(t, {
        redirectUris: ['https://app.example/callback'],
        tokenEndpointAuthMethod: method,
      });
      expect(client.token_endpoint_auth_method).toBe(method);
      for (const via of ['basic', 'post'] as const) {
        expect((await revoke(client.client_id, client_secret!, via)).status).toBe(200);
        const wrong = await revoke(client.client_id, `${client_secret!.slice(0, -1)}x`, via);
        expect(wrong.status).toBe(401);
        expect(await wrong.json()).toMatchObject({ error: 'invalid_client' });
      }
    },
  );
});
