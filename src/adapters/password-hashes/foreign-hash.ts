/** A hash written elsewhere, parsed and within the bounds: ready to verify a password. */
export interface ForeignHash {
  /** Names the algorithm (`bcrypt`, `pbkdf2-sha256`, …), for audit details and summaries. */
  scheme: string;
  /** False for a wrong password; never throws. */
  verify(password: string): Promise<boolean>;
}

/**
 * One format's reading of a hash string: undefined when the string is not in this format,
 * a sentence when it is but cannot be used (malformed, or beyond the bounds).
 */
export type FormatReading = ForeignHash | string | undefined;

export type Format = (hash: string) => FormatReading;
