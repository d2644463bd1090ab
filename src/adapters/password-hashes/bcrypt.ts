import { createHash } from 'node:crypto';
import { verify } from '@node-rs/bcrypt';
import { IMPORT_BOUNDS } from './bounds.js';
import type { Format, FormatReading } from './foreign-hash.js';

/** `$2a$`, `$2b$`, `$2y$`, two cost digits, 22 characters of salt and 31 of hash. */
const BCRYPT = /^\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}$/;

function readBcrypt(hash: string, scheme: string, prepare: (password: string) => string) {
  // crypt_blowfish's buggy variant: the standard algorithm would verify it wrongly.
  if (hash.startsWith('$2x$')) return 'bcrypt $2x$ hashes are not accepted';
  if (!BCRYPT.test(hash)) return `${scheme} hash is malformed`;
  // The pattern above guarantees the two cost digits.
  const cost = Number(hash.slice(4, 6));
  if (cost > IMPORT_BOUNDS.bcryptCost) {
    return `bcrypt cost ${cost} is above the import bound of ${IMPORT_BOUNDS.bcryptCost}`;
  }
  return {
    scheme,
    verify: (password: string) => verify(prepare(password), hash).catch(() => false),
  };
}

const asIs = (password: string) => password;

/**
 * Django's BCryptSHA256PasswordHasher hashes the password with SHA-256 first (lowercase
 * hex), so that bcrypt's 72-byte limit never cuts it.
 */
const sha256Hex = (password: string) => createHash('sha256').update(password).digest('hex');

/** bcrypt as crypt(3) writes it, and Django's `bcrypt$…` and `bcrypt_sha256$…`. */
export const bcryptFormat: Format = (hash): FormatReading => {
  if (hash.startsWith('$2')) return readBcrypt(hash, 'bcrypt', asIs);
  if (hash.startsWith('bcrypt$')) return readBcrypt(hash.slice(7), 'bcrypt', asIs);
  if (hash.startsWith('bcrypt_sha256$')) {
    return readBcrypt(hash.slice(14), 'bcrypt-sha256', sha256Hex);
  }
  return undefined;
};
