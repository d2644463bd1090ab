import type { MailCodePurpose, MailCodeRecord } from './mail-code.js';

/**
 * Persistence of mailed codes. Every state change is one conditional UPDATE whose row
 * count decides, so racing requests (in any number of processes, on either database)
 * cannot both use a code, nor count past the cap.
 */
export interface MailCodeStore {
  insertMailCode(record: MailCodeRecord): Promise<void>;
  findMailCode(id: string): Promise<MailCodeRecord | undefined>;
  /** The identity's pending codes of this purpose, newest first (at most one in practice). */
  listPendingMailCodes(identityId: string, purpose: MailCodePurpose): Promise<MailCodeRecord[]>;
  /** Marks every pending code of the identity and purpose `superseded`; returns how many. */
  supersedeMailCodes(identityId: string, purpose: MailCodePurpose): Promise<number>;
  /**
   * Counts one wrong attempt on a pending code and closes it (`failed`) at `maxAttempts`,
   * in one statement. False when the code was no longer pending.
   */
  countMailCodeAttempt(id: string, maxAttempts: number): Promise<boolean>;
  /** `pending` and unexpired to `used`; false when another request got there first. */
  useMailCode(id: string, now: number): Promise<boolean>;
  /** New secrets and expiry for a pending code (a resend); false when no longer pending. */
  renewMailCode(
    id: string,
    secrets: { code_hash: string; token_hash: string; expires_at: number },
  ): Promise<boolean>;
  /** Deletes the codes, in any state, that expired before `before`; returns how many. */
  deleteExpiredMailCodes(before: number): Promise<number>;
}
