import type { Redemption } from '../sign-in/method.js';

/**
 * A password sign-in's redemption: the identity's password hash is still `verifiedHash`,
 * the exact string the password verified against (or the rehash that replaced it). A
 * password set after the verification (account page, `PUT /v1/identities/{id}/password`,
 * the CLI) makes it false, and the sign-in then mints nothing.
 *
 * It reads the hash and holds it until the sign-in commits (`holdPasswordHash`: a share
 * lock on the row on PostgreSQL; on SQLite the transaction holds the write lock
 * throughout). A change that comes later waits for that commit, then revokes the new
 * session with the others; one that came first holds the row, and the read, re-checked
 * after it commits, finds the new hash. Nothing is written: a sign-in leaves the identity's
 * row as it was (until 2026-11-28 it swapped the hash for itself, which on PostgreSQL wrote
 * a new row version per sign-in and made sign-ins of one identity wait for each other).
 */
export function verifiedHashStillSet(identityId: string, verifiedHash: string): Redemption {
  return (tx) => tx.holdPasswordHash(identityId, verifiedHash);
}
