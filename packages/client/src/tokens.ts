/**
 * Tessera's token format, checked offline: `<prefix>` + 43 base64url characters (32 bytes,
 * unpadded). A token minted since checksums were introduced carries 28 random bytes and then
 * the big-endian CRC-32 (IEEE, as zlib's) of the ASCII prefix followed by those 28 bytes, so
 * a mistyped or made-up token is refused before any network call. No Node-only API: this
 * module runs in browsers too.
 */

export const TOKEN_PREFIX = {
  session: 'tess_s_',
  service: 'tess_svc_',
  flow: 'tess_f_',
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIX;

/**
 * - `ok`: well-formed with a valid checksum.
 * - `legacy`: well-formed, but its checksum fails: a token minted before checksums (or a
 *   made-up one). Accepted only with `acceptLegacyTokens`.
 * - `malformed`: not the prefix plus 43 canonical base64url characters.
 */
export type TokenCheck = 'ok' | 'legacy' | 'malformed';

const BODY = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3, reflected, as zlib.crc32) of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function decodeBase64Url(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 6) / 8));
  let bits = 0;
  let value = 0;
  let index = 0;
  for (const char of text) {
    value = (value << 6) | ALPHABET.indexOf(char);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (value >>> bits) & 0xff;
    }
  }
  return out;
}

/** Checks a token of `kind` offline: its prefix, length, alphabet and checksum. */
export function checkToken(kind: TokenKind, value: unknown): TokenCheck {
  if (typeof value !== 'string') return 'malformed';
  const prefix = TOKEN_PREFIX[kind];
  if (!value.startsWith(prefix)) return 'malformed';
  const body = value.slice(prefix.length);
  if (!BODY.test(body)) return 'malformed';
  const bytes = decodeBase64Url(body);
  const signed = new Uint8Array(prefix.length + 28);
  for (let i = 0; i < prefix.length; i += 1) signed[i] = prefix.charCodeAt(i);
  signed.set(bytes.subarray(0, 28), prefix.length);
  const expected = crc32(signed);
  const stated = ((bytes[28]! << 24) | (bytes[29]! << 16) | (bytes[30]! << 8) | bytes[31]!) >>> 0;
  return stated === expected ? 'ok' : 'legacy';
}

/** Whether a token of `kind` may be sent on: `ok`, or `legacy` when legacy tokens are accepted. */
export function isAcceptableToken(
  kind: TokenKind,
  value: unknown,
  options: { acceptLegacyTokens?: boolean } = {},
): value is string {
  const check = checkToken(kind, value);
  return check === 'ok' || (check === 'legacy' && options.acceptLegacyTokens === true);
}
