import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
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

/**
 * 43 characters carry 258 bits for 256: the last character's two low bits are always zero
 * in an encoder's output, so only these 16 characters can end a token ever minted.
 */
const CANONICAL_LAST = new Set('AEIMQUYcgkosw048');

/** CRC-32 of each prefix, the running value the random bytes continue from. */
const PREFIX_CRC = Object.fromEntries(
  Object.entries(TOKEN_PREFIX).map(([kind, prefix]) => [kind, crc32(prefix)]),
) as Record<TokenKind, number>;

/** Decoding target of the checksum check: synchronous use only, so one buffer serves all. */
const scratch = Buffer.alloc(32);
const scratchRandom = scratch.subarray(0, RANDOM_BYTES);

export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function newToken(kind: TokenKind): string {
  const bytes = Buffer.alloc(32);
  randomBytes(RANDOM_BYTES).copy(bytes);
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
 * or a made-up string); `malformed`, no token of this kind ever looked like this.
 * One base64url decode into a reused buffer and one CRC over 28 bytes.
 */
export function tokenShape(kind: TokenKind, value: unknown): 'crc32' | 'unchecked' | 'malformed' {
  if (!isWellFormedToken(kind, value)) return 'malformed';
  if (!CANONICAL_LAST.has(value[value.length - 1]!)) return 'malformed';
  scratch.write(value.slice(TOKEN_PREFIX[kind].length), 'base64url');
  return crc32(scratchRandom, PREFIX_CRC[kind]) === scratch.readUInt32BE(RANDOM_BYTES)
    ? 'crc32'
    : 'unchecked';
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
