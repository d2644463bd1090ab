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
}
