/** What import makes of a hash from a file: its stored form, or why it is refused. */
export type AcceptedHash = { stored: string; scheme: string } | { refused: string };

/** A stored hash as a file carries it. */
export interface PortableHash {
  password_hash: string;
  /** Tessera's own argon2id: verifies only with the same SERVICE_PASSWORD_PEPPER. */
  peppered: boolean;
}

/**
 * Hashes moving in and out of Tessera (`identity import`, `identity export`). Implemented
 * outside the domain (adapters/password-hashes/): the domain never imports a hash library.
 */
export interface HashTransfer {
  /**
   * `peppered`: the file says the hash is one Tessera wrote with its pepper (an export).
   * Refused: an unknown or malformed format, or a cost beyond the import bounds.
   */
  accept(hash: string, options: { peppered: boolean }): AcceptedHash;
  portable(stored: string): PortableHash;
}
