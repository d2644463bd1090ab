import type { Clock } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { notFound } from '../errors.js';
import type { IdentityRecord } from '../identities/identity.js';
import type { Store } from '../store.js';
import type { SessionListing } from './session.js';

/**
 * `GET /v1/identities/{id}/sessions` (support screens) and the account page: the identity's
 * sessions neither revoked nor expired, newest first, with their devices, and the identity
 * they belong to (each listed session embeds it, like every Session object). An id that
 * cannot be an identity's, or names none, is `not_found`.
 */
export async function listIdentitySessions(
  deps: { store: Pick<Store, 'findIdentityById' | 'listLiveSessions'>; clock: Clock },
  identityId: string,
): Promise<{ identity: IdentityRecord; sessions: SessionListing[] }> {
  const identity = isUuid(identityId) ? await deps.store.findIdentityById(identityId) : undefined;
  if (!identity) throw notFound();
  return { identity, sessions: await deps.store.listLiveSessions(identityId, deps.clock.now()) };
}
