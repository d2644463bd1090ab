import type { HashTransfer } from '../../domain/passwords/hash-transfer.js';
import { checkArgon2 } from './argon2.js';
import { IMPORTED_PREFIX, readForeignHash } from './formats.js';

/** What `identity import` and `identity export` make of password hashes. */
export const hashTransfer: HashTransfer = {
  accept(hash, { peppered }) {
    if (peppered) {
      // Tessera's own: stored bare, verified with the pepper like any hash it wrote.
      const checked = checkArgon2(hash);
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
