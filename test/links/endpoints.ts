import type { TestApp } from '../helpers/app.js';
import { createIdentity } from '../helpers/core.js';
import { type CoreEndpoint, onNewIdentity } from '../helpers/core-endpoints.js';
import { newPair, newSeed } from './helpers.js';

/** The link endpoints of SPEC.md 5.2 with the grant each requires and its audit action. */
export const LINK_ENDPOINTS: CoreEndpoint[] = [
  {
    name: 'POST /v1/authenticate/link',
    grant: 'external_auth',
    action: 'authenticate_link',
    ok: 201,
    request: async () => ({
      method: 'POST',
      url: '/v1/authenticate/link',
      body: { ...newPair(), seed: newSeed() },
    }),
  },
  {
    name: 'POST /v1/identities/{id}/links',
    grant: 'external_link',
    action: 'link_attach',
    ok: 201,
    request: onNewIdentity('POST', '/links', () => ({ ...newPair(), verified: true })),
  },
  {
    name: 'GET /v1/identities/{id}/links',
    grant: 'identity_read',
    action: 'link_list',
    ok: 200,
    request: onNewIdentity('GET', '/links'),
  },
  {
    name: 'DELETE /v1/identities/{id}/links',
    grant: 'external_link',
    action: 'link_detach',
    ok: 204,
    async request(t) {
      const identity = await createIdentity(t);
      const pair = newPair();
      await insertLink(t, identity.id, pair);
      return { method: 'DELETE', url: `/v1/identities/${identity.id}/links`, body: pair };
    },
  },
];

/** Stores a verified link directly, bypassing the API and its audit trail. */
export async function insertLink(
  t: TestApp,
  identityId: string,
  pair: { provider: string; subject: string },
): Promise<void> {
  const now = t.clock.now();
  await t.deps.store.insertLink({
    ...pair,
    identity_id: identityId,
    verified_at: now,
    linked_at: now,
  });
}
