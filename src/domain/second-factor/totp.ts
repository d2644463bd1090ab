/**
 * RFC 6238 codes, behind an interface so the domain imports no OTP library (the otplib
 * implementation is src/adapters/otplib-totp.ts). Codes are 6 digits, SHA-1, 30-second
 * steps: what every authenticator app reads from an `otpauth://` URI.
 */
export interface TotpEngine {
  /** A new random base32 secret (160 bits). */
  newSecret(): string;
  /** The `otpauth://totp/…` URI an authenticator app scans. */
  uri(input: { issuer: string; account: string; secret: string }): string;
  /**
   * The time step `code` belongs to, if it is the code of the step at `atMs` or of the one
   * just before or after it (clock drift), and that step is later than `afterStep`; null
   * otherwise. Compared in constant time by the library.
   */
  verify(
    secret: string,
    code: string,
    atMs: number,
    afterStep: number | null,
  ): Promise<number | null>;
}

/** The secret box context of an identity's TOTP secret: a sealed secret opens for its owner only. */
export function totpSecretContext(identityId: string): string {
  return `totp:${identityId}`;
}

/** The code as typed (spaces are common, "123 456"), or null if it cannot be a code. */
export function normalizeTotpCode(raw: string): string | null {
  const code = raw.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : null;
}
