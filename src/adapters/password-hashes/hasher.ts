import type { PasswordHasher } from '../../domain/passwords/password-hasher.js';
import { createLimiter } from '../../lib/limiter.js';
import { IMPORTED_PREFIX, readForeignHash } from './formats.js';

/**
 * Tessera's own hasher, extended to verify the imported hashes it stores (prefixed
 * `imported:`). New hashes are always Tessera's own; `foreignScheme` tells the sign-in to
 * replace an imported one once the password has verified.
 */
export function withImportedHashes(
  own: Omit<PasswordHasher, 'foreignScheme'>,
  concurrency: number,
): PasswordHasher {
  const limit = createLimiter(concurrency);
  return {
    hash: (password) => own.hash(password),
    verifyDummy: (password) => own.verifyDummy(password),
    async verify(passwordHash, password) {
      if (!passwordHash.startsWith(IMPORTED_PREFIX)) return own.verify(passwordHash, password);
      // Bounds again: a row written by other means than import gets no more work.
      const foreign = readForeignHash(passwordHash.slice(IMPORTED_PREFIX.length));
      // The dummy verification runs alongside: a wrong password on an imported hash (often
      // far cheaper than argon2) takes at least as long as one on an unknown username.
      const [ok] = await Promise.all([
        typeof foreign === 'string' ? false : limit(() => foreign.verify(password)),
        own.verifyDummy(password),
      ]);
      return ok;
    },
    pepperOf(passwordHash) {
      return passwordHash.startsWith(IMPORTED_PREFIX) ? null : own.pepperOf(passwordHash);
    },
    peppers: own.peppers,
    foreignScheme(passwordHash) {
      if (!passwordHash.startsWith(IMPORTED_PREFIX)) return null;
      const foreign = readForeignHash(passwordHash.slice(IMPORTED_PREFIX.length));
      return typeof foreign === 'string' ? 'unknown' : foreign.scheme;
    },
  };
}
