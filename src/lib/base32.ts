import { ScureBase32Plugin } from 'otplib';

/**
 * RFC 4648 base32 as authenticator apps read TOTP secrets: otplib's own codec, so a secret
 * accepted here is one the verification (src/adapters/otplib-totp.ts) decodes the same way.
 * Case-insensitive, padding optional; written uppercase without padding.
 */
const codec = new ScureBase32Plugin();

/** The bytes, or null when `text` is not base32. */
export function decodeBase32(text: string): Uint8Array | null {
  try {
    return codec.decode(text);
  } catch {
    return null;
  }
}

export function encodeBase32(bytes: Uint8Array): string {
  return codec.encode(bytes);
}
