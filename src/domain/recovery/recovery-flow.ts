import { toIso } from '../../lib/clock.js';
import { randomSecret } from '../../lib/tokens.js';

/**
 * `created`: waiting for an address. `sent`: an address was given and, when it is an
 * identity's verified address, a code was mailed to it; the flow says the same either way.
 * `completed`: a new password was set through it. `failed`: too many wrong codes.
 * Expiry is a time, not a state: a live flow past `expires_at` is shown as `expired`.
 */
export type RecoveryFlowState = 'created' | 'sent' | 'completed' | 'failed';
export type RecoveryFlowViewState = RecoveryFlowState | 'expired';

export interface RecoveryFlowRecord {
  /** `rf_<random>`: names the flow in its page, its posts and the mail's link. */
  id: string;
  csrf_token: string;
  return_to: string | null;
  state: RecoveryFlowState;
  /** The canonical address typed, once given (a resend mails it again). */
  address: string | null;
  /** The mailed code (mail_codes) the flow waits for; null when none was sent. */
  mail_code_id: string | null;
  /** Wrong codes (and second factors) submitted; the flow closes (`failed`) at the cap. */
  attempts: number;
  created_at: number;
  expires_at: number;
}

export function newRecoveryFlowId(): string {
  return `rf_${randomSecret()}`;
}

const LIVE: ReadonlySet<RecoveryFlowState> = new Set(['created', 'sent']);

export function recoveryViewState(flow: RecoveryFlowRecord, now: number): RecoveryFlowViewState {
  return LIVE.has(flow.state) && flow.expires_at <= now ? 'expired' : flow.state;
}

/**
 * The flow as an operator's own UI sees it, with its CSRF token. Nothing in it depends on
 * whether the address belongs to anyone: not the code's id, not whether one was sent.
 */
export interface RecoveryFlowView {
  id: string;
  flow_id: string;
  state: RecoveryFlowViewState;
  address: string | null;
  return_to: string | null;
  expires_at: string;
  csrf_token: string;
}

export function toRecoveryView(flow: RecoveryFlowRecord, now: number): RecoveryFlowView {
  return {
    id: flow.id,
    flow_id: flow.id,
    state: recoveryViewState(flow, now),
    address: flow.address,
    return_to: flow.return_to,
    expires_at: toIso(flow.expires_at),
    csrf_token: flow.csrf_token,
  };
}
