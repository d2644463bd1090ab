/**
 * Base64 as the hash formats write it: standard (Django, with `=` padding), and passlib's
 * "adapted" base64 (`.` for `+`, no padding; passlib's scrypt keeps `+`). Strict: any other
 * character, or a length no encoding produces, is null rather than silently skipped the way
 * Buffer.from(text, 'base64') would.
 */
export function decodeBase64(text: string): Buffer | null {
  const standard = text.replaceAll('.', '+');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(standard)) return null;
  const bare = standard.replace(/=+$/, '');
  if (bare.length % 4 === 1) return null;
  if (standard.length !== bare.length && standard.length % 4 !== 0) return null;
  return Buffer.from(bare, 'base64');
}

/** A decimal count as the formats write it: no sign, no leading zero, at most 10 digits. */
export function parseCount(text: string): number | null {
  return /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : null;
}
