import type { TokenFormat } from '../../lib/tokens.js';
import type { FlowErrorRecord, FlowRecord, FlowState } from './flow.js';

export interface FlowStore {
  /** `token_format` records how the flow id was minted (docs/tokens.md). */
  insertFlow(record: FlowRecord & { token_format: TokenFormat }): Promise<void>;
  findFlow(id: string): Promise<FlowRecord | undefined>;
  listFlowErrors(flowId: string): Promise<FlowErrorRecord[]>;
  /**
   * Moves a flow from `from` (default `created`) to `completed` in one conditional UPDATE;
   * returns false when another submission (in this or another process) got there first,
   * the flow was closed meanwhile, or it expired.
   */
  completeFlow(id: string, now: number, from?: FlowState): Promise<boolean>;
  /**
   * Moves a `created` flow to `second_factor_required`, remembering the identity and the
   * first factor's method, in one conditional UPDATE; false as for `completeFlow`.
   */
  awaitSecondFactor(
    id: string,
    now: number,
    identityId: string,
    firstMethod: string,
  ): Promise<boolean>;
  /**
   * Closes (state `failed`) every flow waiting for the identity's second factor: its first
   * factor no longer holds (a new password). Returns how many.
   */
  closeWaitingFlows(identityId: string): Promise<number>;
  /** Records a failure; a flow that no longer exists records nothing. */
  recordFlowError(record: FlowErrorRecord): Promise<void>;
  /**
   * Counts one failed attempt (a first or a second factor) and closes the flow (state
   * `failed`) when it reaches `maxAttempts`, in one statement so racing failures cannot
   * exceed the cap. Returns false when the flow was no longer open (`created` or
   * `second_factor_required`): closed by a racing submission.
   */
  countFailedAttempt(id: string, maxAttempts: number): Promise<boolean>;
  deleteExpiredFlows(now: number): Promise<number>;
}
