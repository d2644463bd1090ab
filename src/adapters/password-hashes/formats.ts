import { argon2Format } from './argon2.js';
import { bcryptFormat } from './bcrypt.js';
import { IMPORT_BOUNDS } from './bounds.js';
import type { ForeignHash } from './foreign-hash.js';
import { pbkdf2Format } from './pbkdf2.js';
import { scryptFormat } from './scrypt.js';

const FORMATS = [argon2Format, bcryptFormat, pbkdf2Format, scryptFormat];

/** Stored hashes from elsewhere carry this prefix; Tessera's own (peppered) argon2id none. */
export const IMPORTED_PREFIX = 'imported:';

/** Reads a hash written elsewhere, or says why it cannot be used. */
export function readForeignHash(hash: string): ForeignHash | string {
  if (hash.length > IMPORT_BOUNDS.hashLength) {
    return `password_hash is longer than ${IMPORT_BOUNDS.hashLength} characters`;
  }
  // Every accepted format is printable ASCII; this also keeps NUL and newlines out.
  if (!/^[\x21-\x7e]+$/.test(hash)) return 'password_hash must be printable ASCII';
  for (const format of FORMATS) {
    const reading = format(hash);
    if (reading !== undefined) return reading;
  }
  return 'password_hash is in no accepted format (argon2id, argon2i, bcrypt, scrypt or PBKDF2, as crypt, Django, passlib, Ory Kratos or better-auth write them)';
}
