/** An identity's TOTP authenticator: pending until confirmed with a code. */
export interface TotpFactorRecord {
  identity_id: string;
  /** The base32 secret, sealed with the secret box under `totpSecretContext(identity_id)`. */
  secret_sealed: string;
  /** Null while the enrolment waits for its first code; a pending factor signs nothing in. */
  confirmed_at: number | null;
  /** The last RFC 6238 time step a code was accepted for: no code of it or earlier is taken again. */
  last_used_step: number | null;
  created_at: number;
}

/** One recovery code: only its SHA-256 is kept. */
export interface RecoveryCodeRecord {
  identity_id: string;
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

export interface SecondFactorStore {
  findTotpFactor(identityId: string): Promise<TotpFactorRecord | undefined>;
  insertTotpFactor(record: TotpFactorRecord): Promise<void>;
  /** Removes the identity's factor, pending or confirmed; returns whether there was one. */
  deleteTotpFactor(identityId: string): Promise<boolean>;
  /** Marks a pending factor confirmed at `step`; false if it was confirmed or removed meanwhile. */
  confirmTotpFactor(identityId: string, at: number, step: number): Promise<boolean>;
  /**
   * Records `step` as used, in one conditional UPDATE: false when that step or a later one
   * was already used (a replay, or a racing submission of the same code).
   */
  useTotpStep(identityId: string, step: number): Promise<boolean>;
  /** Replaces the sealed secret if it is still `previous` (re-sealing under the current key). */
  resealTotpSecret(identityId: string, previous: string, sealed: string): Promise<void>;
  /** The identity's unused recovery codes. */
  listUnusedRecoveryCodes(identityId: string): Promise<RecoveryCodeRecord[]>;
  /** Marks one unused code used; false when it was used (or removed) meanwhile. */
  useRecoveryCode(identityId: string, codeHash: string, at: number): Promise<boolean>;
  /** Deletes every code of the identity and stores these instead. */
  replaceRecoveryCodes(
    identityId: string,
    codeHashes: readonly string[],
    at: number,
  ): Promise<void>;
  deleteRecoveryCodes(identityId: string): Promise<number>;
}
