import type { HashTransfer } from '../../domain/passwords/hash-transfer.js';
import type { PasswordHasher } from '../../domain/passwords/password-hasher.js';
import { checkArgon2 } from './argon2.js';
import { IMPORTED_PREFIX, readForeignHash } from './formats.js';
import { readPepperId, withPepperId } from './peppers.js';

/** What `identity import` and `identity export` make of password hashes. */
export const hashTransfer: HashTransfer = {
  accept(hash, { peppered }) {
    if (peppered) {
      // Tessera's own: stored as given, its pepper id (`keyid=`) included, and verified
      // with the pepper of that id like any hash it wrote.
      const checked = checkArgon2(readPepperId(hash).phc);
      if (typeof checked === 'string') return { refused: checked };
      return { stored: hash, scheme: 'tessera' };
    }
    const read = readForeignHash(hash);
    if (typeof read === 'string') return { refused: read };
    return { stored: `${IMPORTED_PREFIX}${hash}`, scheme: read.scheme };
  },
  portable(stored) {
    return stored.startsWith(IMPORTED_PREFIX)
      ? { password_hash: stored.slice(IMPORTED_PREFIX.length), peppered: false }
      : { password_hash: stored, peppered: true };
  },
};

/**
 * `hashTransfer` for this deployment: an exported hash of Tessera's own always names its
 * pepper, also one written before hashes did (the id it is read as here), so the
 * deployment importing it knows which pepper it needs.
 */
export function hashTransferFor(hasher: Pick<PasswordHasher, 'pepperOf'>): HashTransfer {
  return {
    accept: hashTransfer.accept,
    portable(stored) {
      const portable = hashTransfer.portable(stored);
      const pepper = portable.peppered ? hasher.pepperOf(stored) : null;
      if (pepper === null || pepper.tagged) return portable;
      return { ...portable, password_hash: withPepperId(stored, pepper.id) };
    },
  };
}
