/** The password hashing the domain needs; src/adapters/ implements it (argon2id). */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** False for a wrong password and for a hash that cannot be parsed. */
  verify(passwordHash: string, password: string): Promise<boolean>;
  /**
   * Spends the same work as `verify` against a fixed dummy hash, so that an unknown
   * username takes as long as a wrong password. Always false.
   */
  verifyDummy(password: string): Promise<false>;
  /**
   * The scheme of a stored hash that Tessera did not write (an imported one), or null for
   * its own. Non-null after a successful `verify` means: store a fresh `hash` instead.
   */
  foreignScheme(passwordHash: string): string | null;
  /**
   * The pepper one of Tessera's own hashes was made with (by id, never the pepper), or null
   * for an imported hash. A hash written before hashes named their pepper (`tagged` false)
   * is read as the oldest configured pepper's. `known`: that pepper is still configured;
   * if not, the hash verifies no password.
   */
  pepperOf(passwordHash: string): HashPepper | null;
  /** The ids of the configured peppers: new hashes use `current`. */
  readonly peppers: { current: string; previous: readonly string[] };
}

export interface HashPepper {
  id: string;
  tagged: boolean;
  known: boolean;
}
