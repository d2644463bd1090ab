import type { PasskeyRecord, WebAuthnChallengeRecord } from './passkey.js';

export interface PasskeyUse {
  sign_count: number;
  backed_up: number;
  device_type: PasskeyRecord['device_type'];
  last_used_at: number;
}

/** Persistence the passkeys module and the passkey sign-in method need. */
export interface PasskeyStore {
  /** Throws UniqueViolation when the credential id is already registered (to anyone). */
  insertPasskey(record: PasskeyRecord): Promise<void>;
  /** Oldest first. */
  listPasskeys(identityId: string): Promise<PasskeyRecord[]>;
  findPasskeyByCredentialId(credentialId: string): Promise<PasskeyRecord | undefined>;
  /** After a verified sign-in: the new counter, backup state and time of use. */
  recordPasskeyUse(id: string, use: PasskeyUse): Promise<void>;
  /** Renames only a passkey of `identityId`; returns it afterwards, undefined when none. */
  renamePasskey(identityId: string, id: string, name: string): Promise<PasskeyRecord | undefined>;
  /** Deletes only a passkey of `identityId`; returns whether one went. */
  deletePasskey(identityId: string, id: string): Promise<boolean>;
  /** Deletes every passkey of the identity; returns how many went. */
  deletePasskeys(identityId: string): Promise<number>;
  /** Stores the binding's challenge, replacing the one it had. */
  putWebAuthnChallenge(record: WebAuthnChallengeRecord): Promise<void>;
  /**
   * Removes the binding's challenge and returns it when it was still live: single use, in
   * one statement, so two submissions racing for one challenge cannot both have it.
   */
  takeWebAuthnChallenge(binding: string, now: number): Promise<WebAuthnChallengeRecord | undefined>;
  /** The binding's challenge while it is live, left in place (a sign-in takes it as it mints). */
  findWebAuthnChallenge(binding: string, now: number): Promise<WebAuthnChallengeRecord | undefined>;
  deleteExpiredWebAuthnChallenges(now: number): Promise<number>;
}
