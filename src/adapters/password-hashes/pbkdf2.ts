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
/**
 * Ory Kratos: `$pbkdf2-sha256$i=<iterations>,l=<key length>$<salt>$<hash>` (also -sha1,
 * -sha512), unpadded standard base64. The key may be longer than the digest: Keycloak's
 * PBKDF2 keys are 64 bytes whatever the digest, and its exports are written in this form.
 */
const KRATOS = /^\$pbkdf2-(sha1|sha256|sha512)\$i=([0-9]+),l=([0-9]+)\$([^$]*)\$([^$]*)$/;
/** Keys of other lengths than the digest's (Kratos's form only): as long as anyone makes them. */
const KEY_BYTES = { min: 16, max: 64 };

function readPbkdf2(
  digest: Digest,
  iterationsText: string,
  salt: Buffer | null,
  expected: Buffer | null,
  anyKeyLength = false,
): FormatReading {
  const scheme = `pbkdf2-${digest}`;
  const iterations = parseCount(iterationsText);
  if (iterations === null || salt === null || expected === null) {
    return `${scheme} hash is malformed`;
  }
  if (anyKeyLength) {
    if (expected.length < KEY_BYTES.min || expected.length > KEY_BYTES.max) {
      return `${scheme} hash must be ${KEY_BYTES.min}-${KEY_BYTES.max} bytes (it is ${expected.length})`;
    }
  } else if (expected.length !== DIGEST_BYTES[digest]) {
    return `${scheme} hash must be ${DIGEST_BYTES[digest]} bytes (it is ${expected.length})`;
  }
  // A key longer than the digest is derived block by block, each block all the iterations.
  const work = iterations * Math.ceil(expected.length / DIGEST_BYTES[digest]);
  if (work > IMPORT_BOUNDS.pbkdf2Iterations) {
    const blocks = work === iterations ? '' : ` × ${work / iterations} blocks`;
    return `${scheme} iterations ${iterations}${blocks} are above the import bound of ${IMPORT_BOUNDS.pbkdf2Iterations}`;
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
  const kratos = KRATOS.exec(hash);
  if (kratos) {
    const [, digest, iterations, length, salt, encoded] = kratos as RegExpExecArray & string[];
    const expected = /=/.test(encoded! + salt!) ? null : decodeBase64(encoded!);
    if (expected !== null && parseCount(length!) !== expected.length) {
      return `pbkdf2-${digest} hash is not the l=${length} bytes it says`;
    }
    return readPbkdf2(digest as Digest, iterations!, decodeBase64(salt!), expected, true);
  }
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
