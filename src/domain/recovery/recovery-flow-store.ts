import type { RecoveryFlowRecord } from './recovery-flow.js';

/**
 * Persistence of recovery flows. Each state change is one conditional UPDATE, so racing
 * submissions (in any number of processes) cannot both complete a flow nor count past the
 * cap; the code itself is spent in mail_codes, in the same transaction.
 */
export interface RecoveryFlowStore {
  insertRecoveryFlow(record: RecoveryFlowRecord): Promise<void>;
  findRecoveryFlow(id: string): Promise<RecoveryFlowRecord | undefined>;
  /**
   * A live flow (`created` or `sent`, unexpired) to `sent` with the address, the code sent
   * (or null) and a new expiry; false when the flow was closed or expired meanwhile.
   */
  markRecoverySent(
    id: string,
    sent: { address: string; mail_code_id: string | null; expires_at: number },
    now: number,
  ): Promise<boolean>;
  /**
   * Counts one wrong attempt on a `sent` flow and closes it (`failed`) at `maxAttempts`, in
   * one statement. False when the flow was no longer `sent`.
   */
  countRecoveryAttempt(id: string, maxAttempts: number): Promise<boolean>;
  /** `sent` and unexpired to `completed`; false when another request got there first. */
  completeRecoveryFlow(id: string, now: number): Promise<boolean>;
  /** Deletes the flows that expired before `before`; returns how many. */
  deleteExpiredRecoveryFlows(before: number): Promise<number>;
}
