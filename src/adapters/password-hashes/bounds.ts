/**
 * The most work an imported hash may demand of one sign-in. A hash is verified once per
 * attempt on its username, so a file with an absurd cost (bcrypt 31, a billion PBKDF2
 * rounds, gigabytes of scrypt memory) would turn every attempt into a denial of service.
 * Each bound sits at about bcrypt cost 14 (around a second of one core), above every
 * default of the libraries the formats come from. Checked at import (the line is refused)
 * and again before every verification.
 */
export const IMPORT_BOUNDS = {
  bcryptCost: 14,
  pbkdf2Iterations: 2_000_000,
  /** scrypt's memory, 128·N·r bytes. */
  scryptMemoryBytes: 128 * 1024 * 1024,
  /** scrypt's work, 128·N·r·p bytes processed. */
  scryptWorkBytes: 256 * 1024 * 1024,
  argon2MemoryKib: 256 * 1024,
  /** argon2's work, m·t KiB processed. */
  argon2WorkKib: 1024 * 1024,
  argon2Lanes: 16,
  /** Characters of the whole hash string: every accepted format is far shorter. */
  hashLength: 512,
} as const;
