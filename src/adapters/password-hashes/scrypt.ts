import { scrypt, timingSafeEqual } from 'node:crypto';
import { IMPORT_BOUNDS } from './bounds.js';
import { decodeBase64, parseCount } from './encoding.js';
import type { Format, FormatReading } from './foreign-hash.js';

/** Django: `scrypt$<N>$<salt text>$<r>$<p>$<base64 hash>`. */
const DJANGO = /^scrypt\$([^$]*)\$([^$]+)\$([^$]*)\$([^$]*)\$([^$]*)$/;
/** passlib: `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<base64 salt>$<base64 hash>`, unpadded. */
const PASSLIB = /^\$scrypt\$ln=([0-9]+),r=([0-9]+),p=([0-9]+)\$([^$]*)\$([^$]*)$/;
/**
 * better-auth (`@better-auth/utils/password`): `<salt>:<key>`, 16 random bytes written as 32
 * lowercase hex digits (and that text's bytes are the salt), a 64-byte key in hex. The
 * parameters are fixed in its code, not in the string: N=16384, r=16, p=1, and the password
 * is NFKC-normalised first.
 */
const BETTER_AUTH = /^([0-9a-f]{32}):([0-9a-f]{128})$/;
const BETTER_AUTH_COST: Cost = { N: 16384, r: 16, p: 1 };

function derive(
  password: string | Buffer,
  salt: Buffer,
  length: number,
  cost: Cost,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem is only a ceiling on what OpenSSL may allocate; the bounds keep the real need
    // at most scryptMemoryBytes (plus p blocks of 128·r bytes).
    const options = { ...cost, maxmem: 2 * IMPORT_BOUNDS.scryptWorkBytes };
    scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

interface Cost {
  N: number;
  r: number;
  p: number;
}

function readScrypt(
  cost: Cost | null,
  salt: Buffer | null,
  expected: Buffer | null,
  prepare: (password: string) => string = (password) => password,
): FormatReading {
  if (cost === null || salt === null || expected === null) return 'scrypt hash is malformed';
  const { N, r, p } = cost;
  if (N < 2 || (N & (N - 1)) !== 0) return 'scrypt N must be a power of 2';
  if (expected.length < 16 || expected.length > 64) {
    return `scrypt hash must be 16-64 bytes (it is ${expected.length})`;
  }
  const memory = 128 * N * r;
  if (memory > IMPORT_BOUNDS.scryptMemoryBytes) {
    return `scrypt memory 128·N·r = ${mib(memory)} MiB is above the import bound of ${mib(IMPORT_BOUNDS.scryptMemoryBytes)} MiB`;
  }
  if (memory * p > IMPORT_BOUNDS.scryptWorkBytes) {
    return `scrypt work 128·N·r·p = ${mib(memory * p)} MiB is above the import bound of ${mib(IMPORT_BOUNDS.scryptWorkBytes)} MiB`;
  }
  return {
    scheme: 'scrypt',
    async verify(password) {
      try {
        const key = await derive(prepare(password), salt, expected.length, cost);
        return timingSafeEqual(key, expected);
      } catch {
        return false;
      }
    },
  };
}

const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 100) / 100;

function costOf(n: number | null, r: number | null, p: number | null): Cost | null {
  return n === null || r === null || p === null ? null : { N: n, r, p };
}

export const scryptFormat: Format = (hash) => {
  const betterAuth = BETTER_AUTH.exec(hash);
  if (betterAuth) {
    const [, salt, key] = betterAuth as RegExpExecArray & string[];
    return readScrypt(
      BETTER_AUTH_COST,
      Buffer.from(salt!, 'utf8'),
      Buffer.from(key!, 'hex'),
      (password) => password.normalize('NFKC'),
    );
  }
  const django = DJANGO.exec(hash);
  if (django) {
    const [, n, salt, r, p, encoded] = django as RegExpExecArray & string[];
    const cost = costOf(parseCount(n!), parseCount(r!), parseCount(p!));
    return readScrypt(cost, Buffer.from(salt!, 'utf8'), decodeBase64(encoded!));
  }
  const passlib = PASSLIB.exec(hash);
  if (passlib) {
    const [, ln, r, p, salt, encoded] = passlib as RegExpExecArray & string[];
    const log2 = parseCount(ln!);
    // 2^31 and beyond is no sensible N (and beyond what a shift can express).
    const n = log2 === null || log2 > 30 ? null : 2 ** log2;
    return readScrypt(
      costOf(n, parseCount(r!), parseCount(p!)),
      decodeBase64(salt!),
      decodeBase64(encoded!),
    );
  }
  if (/^(scrypt\$|\$scrypt\$)/.test(hash)) return 'scrypt hash is in no accepted format';
  return undefined;
};
