import { hash, randomFillSync, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Every token Tessera hands out is a fixed prefix plus 43 base64url characters (unpadded)
 * of 32 bytes: 28 CSPRNG bytes, then the CRC-32 (IEEE, big-endian) of the ASCII prefix
 * followed by those 28 bytes. The checksum lets the service, clients and secret scanners
 * tell a Tessera token from a typo or a made-up string without any lookup (docs/tokens.md).
 */
export const TOKEN_PREFIX = {
  session: 'tess_s_',
  service: 'tess_svc_',
  flow: 'tess_f_',
  oidcClientSecret: 'tess_ocs_',
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIX;

/**
 * How a stored token was minted: `crc32` carries the checksum; `legacy` (32 random bytes)
 * predates it. Rows record it at insert; a row that does not say is `legacy` (the column's
 * default), so a writer that predates checksums never gets its tokens refused.
 */
export type TokenFormat = 'legacy' | 'crc32';

/** The format `newToken` mints. */
export const TOKEN_FORMAT: TokenFormat = 'crc32';

const RANDOM_BYTES = 28;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** CRC-32 of each prefix, the running value the random bytes continue from. */
const PREFIX_CRC = Object.fromEntries(
  Object.entries(TOKEN_PREFIX).map(([kind, prefix]) => [kind, crc32(prefix)]),
) as Record<TokenKind, number>;

/** base64url character code -> 6-bit value, -1 for anything else. */
const BASE64URL = new Int8Array(128).fill(-1);
for (const [value, char] of [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
].entries()) {
  BASE64URL[char.charCodeAt(0)] = value;
}

/** The IEEE CRC-32 table (reflected polynomial 0xEDB88320), as zlib builds it. */
const CRC_TABLE = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/**
 * CSPRNG bytes drawn from a pool refilled 2 KiB at a time, as Node's own `randomUUID`
 * draws from its cache: a `randomBytes(32)` per token cost 10-12 µs of CPU between requests
 * (OpenSSL's generator, cold in the CPU's caches), three times per flow login, where a
 * copy out of the pool costs well under one (docs/tokens.md). Bytes handed out are zeroed
 * in the pool at once, so a secret lives only in the buffer of the token it became.
 */
const POOL_BYTES = 2048;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function fillFromPool(target: Buffer, length: number): void {
  if (poolOffset + length > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  pool.copy(target, 0, poolOffset, poolOffset + length);
  pool.fill(0, poolOffset, poolOffset + length);
  poolOffset += length;
}

export function randomSecret(): string {
  const bytes = Buffer.allocUnsafe(32);
  fillFromPool(bytes, 32);
  return bytes.toString('base64url');
}

export function newToken(kind: TokenKind): string {
  const bytes = Buffer.allocUnsafe(32);
  fillFromPool(bytes, RANDOM_BYTES);
  bytes.writeUInt32BE(crc32(bytes.subarray(0, RANDOM_BYTES), PREFIX_CRC[kind]), RANDOM_BYTES);
  return TOKEN_PREFIX[kind] + bytes.toString('base64url');
}

/** Format check (prefix, 43 base64url characters) done before any storage lookup. */
export function isWellFormedToken(kind: TokenKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const prefix = TOKEN_PREFIX[kind];
  return value.startsWith(prefix) && SECRET_PATTERN.test(value.slice(prefix.length));
}

/**
 * What a presented value can be, offline: `crc32`, a token of this kind whose checksum
 * holds; `unchecked`, well-formed but the checksum fails (a pre-checksum token, or a typo
 * or a made-up string); `malformed`, no token of this kind ever looked like this (wrong
 * prefix, length or alphabet, or a last character no encoder writes: 43 characters carry
 * 258 bits for 256, the last two always zero).
 *
 * One pass over the 43 characters, decoding and running the CRC (table-driven, in
 * JavaScript) together. Minting uses `zlib.crc32`; on the hot path the decode into a
 * buffer and the native call cost more than this loop (docs/tokens.md, "Cost").
 */
export function tokenShape(kind: TokenKind, value: unknown): 'crc32' | 'unchecked' | 'malformed' {
  if (typeof value !== 'string') return 'malformed';
  const prefix = TOKEN_PREFIX[kind];
  const start = prefix.length;
  if (value.length !== start + 43 || !value.startsWith(prefix)) return 'malformed';
  let crc = ~PREFIX_CRC[kind];
  let stored = 0;
  let pending = 0;
  let bits = 0;
  let decoded = 0;
  for (let i = start; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const sextet = code < 128 ? BASE64URL[code]! : -1;
    if (sextet < 0) return 'malformed';
    pending = ((pending << 6) | sextet) & 0x3fff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      const byte = (pending >>> bits) & 0xff;
      if (decoded < RANDOM_BYTES) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
      else stored = (stored << 8) | byte;
      decoded++;
    }
  }
  if ((pending & 0b11) !== 0) return 'malformed';
  return ~crc >>> 0 === stored >>> 0 ? 'crc32' : 'unchecked';
}

/**
 * Only this digest is stored; a database leak yields no usable token. One-shot `hash`
 * (Node 20.12+): a third of `createHash`'s cost, twice on every verify.
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'base64url');
}

/** Constant-time string equality for secrets (CSRF tokens and the like). */
export function secretsEqual(a: string, b: string): boolean {
  const left = hash('sha256', a, 'buffer');
  const right = hash('sha256', b, 'buffer');
  return timingSafeEqual(left, right);
}
