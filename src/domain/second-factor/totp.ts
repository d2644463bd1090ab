import { decodeBase32 } from '../../lib/base32.js';

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

/** The only parameters Tessera's TOTP runs (TotpEngine): every authenticator app's default. */
export const TOTP_ALGORITHM = 'SHA1';
export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
/** RFC 4226's minimum key length (128 bits), which otplib enforces; apps make 160. */
const MIN_SECRET_BYTES = 16;
const MAX_SECRET_BYTES = 64;

/** An authenticator carried over from another system (the import's `totp` field). */
export interface TotpParameters {
  secret: string;
  algorithm?: string;
  digits?: number;
  period?: number;
}

/**
 * The secret as Tessera keeps it (base32, uppercase, no padding or spaces), or why this
 * authenticator cannot work here: codes the user's app makes with other parameters would
 * never match, so an import must not carry it.
 */
export function acceptTotp(totp: TotpParameters): { secret: string } | { refused: string } {
  const { algorithm = TOTP_ALGORITHM, digits = TOTP_DIGITS, period = TOTP_PERIOD_SECONDS } = totp;
  if (algorithm.toUpperCase() !== TOTP_ALGORITHM) {
    return { refused: `algorithm ${algorithm} is not supported (only ${TOTP_ALGORITHM})` };
  }
  if (digits !== TOTP_DIGITS) {
    return { refused: `${digits}-digit codes are not supported (only ${TOTP_DIGITS})` };
  }
  if (period !== TOTP_PERIOD_SECONDS) {
    return { refused: `a ${period}-second period is not supported (only ${TOTP_PERIOD_SECONDS})` };
  }
  const secret = totp.secret.replace(/[\s=]+/g, '').toUpperCase();
  const bytes = decodeBase32(secret);
  if (bytes === null || secret === '') return { refused: 'the secret is not base32' };
  if (bytes.length < MIN_SECRET_BYTES || bytes.length > MAX_SECRET_BYTES) {
    return {
      refused: `the secret is ${bytes.length * 8} bits (${MIN_SECRET_BYTES * 8} to ${MAX_SECRET_BYTES * 8} are supported)`,
    };
  }
  return { secret };
}
