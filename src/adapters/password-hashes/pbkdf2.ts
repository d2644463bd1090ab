import { pbkdf2, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { IMPORT_BOUNDS } from './bounds.js';
import { decodeBase64, parseCount } from './encoding.js';
import type { Format, FormatReading } from './foreign-hash.js';

const derive = promisify(pbkdf2);

const DIGEST_BYTES = { sha1: 20, sha256: 32, sha512: 64 } as const;
type Digest = keyof typeof DIGEST_BYTES;

/**
 * Django: `pbkdf2_sha256$<iterations>$<salt text>$<base64 hash>`, and `pbkdf2_sha1`. Django
 * ships no SHA-512 hasher; a project's own subclass with SHA-512 writes `pbkdf2_sha512` in
 * the same format.
 */
const DJANGO = /^pbkdf2_(sha1|sha256|sha512)\$([^$]*)\$([^$]+)\$([^$]*)$/;
/** passlib: `$pbkdf2-sha256$<rounds>$<ab64 salt>$<ab64 hash>` (also -sha512, and `$pbkdf2$` for SHA-1). */
const PASSLIB = /^\$pbkdf2(?:-(sha256|sha512))?\$([^$]*)\$([^$]*)\$([^$]*)$/;

function readPbkdf2(
  digest: Digest,
  iterationsText: string,
  salt: Buffer | null,
  expected: Buffer | null,
): FormatReading {
  const scheme = `pbkdf2-${digest}`;
  const iterations = parseCount(iterationsText);
  if (iterations === null || salt === null || expected === null) {
    return `${scheme} hash is malformed`;
  }
  if (expected.length !== DIGEST_BYTES[digest]) {
    return `${scheme} hash must be ${DIGEST_BYTES[digest]} bytes (it is ${expected.length})`;
  }
  if (iterations > IMPORT_BOUNDS.pbkdf2Iterations) {
    return `${scheme} iterations ${iterations} are above the import bound of ${IMPORT_BOUNDS.pbkdf2Iterations}`;
  }
  return {
    scheme,
    async verify(password) {
      const actual = await derive(
        Buffer.from(password, 'utf8'),
        salt,
        iterations,
        expected.length,
        digest,
      );
      return timingSafeEqual(actual, expected);
    },
  };
}

export const pbkdf2Format: Format = (hash) => {
  const django = DJANGO.exec(hash);
  if (django) {
    const [, digest, iterations, salt, encoded] = django as RegExpExecArray & string[];
    return readPbkdf2(
      digest as Digest,
      iterations!,
      Buffer.from(salt!, 'utf8'),
      decodeBase64(encoded!),
    );
  }
  const passlib = PASSLIB.exec(hash);
  if (passlib) {
    const [, digest = 'sha1', rounds, salt, encoded] = passlib as RegExpExecArray & string[];
    return readPbkdf2(digest as Digest, rounds!, decodeBase64(salt!), decodeBase64(encoded!));
  }
  if (/^(pbkdf2_|\$pbkdf2)/.test(hash)) return 'PBKDF2 hash is in no accepted format';
  return undefined;
};
