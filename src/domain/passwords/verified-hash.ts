import type { Redemption } from '../sign-in/method.js';

/**
 * A password sign-in's redemption: the identity's password hash is still `verifiedHash`,
 * the exact string the password verified against (or the rehash that replaced it). A
 * password set after the verification (account page, `PUT /v1/identities/{id}/password`,
 * the CLI) makes it false, and the sign-in then mints nothing.
 *
 * It is the rehash's conditional UPDATE, swapping the hash for itself: it matches only
 * while the hash is unchanged, and it locks the identity's row until the sign-in commits
 * (PostgreSQL; on SQLite the transaction holds the write lock throughout). A change that
 * comes later waits for that commit, then revokes the new session with the others; one
 * that came first holds the row, and the UPDATE, re-checked after it commits, matches none.
 */
export function verifiedHashStillSet(identityId: string, verifiedHash: string): Redemption {
  return (tx) => tx.replacePasswordHash(identityId, verifiedHash, verifiedHash);
}
