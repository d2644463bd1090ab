import { toIso } from '../../lib/clock.js';
import { hashToken, secretsEqual } from '../../lib/tokens.js';

export type FlowState = 'created' | 'completed' | 'failed';

export interface FlowRecord {
  id: string;
  csrf_token: string;
  return_to: string | null;
  state: FlowState;
  failed_attempts: number;
  issued_at: number;
  expires_at: number;
}

/** A recorded failure of a flow submission, kept so a UI can show it after a reload. */
export interface FlowErrorRecord {
  flow_id: string;
  at: number;
  error: string;
}

/**
 * `expired` never appears in the database: a flow past its lifetime keeps its stored state
 * until the sweep deletes it, but is shown (and treated) as no longer usable.
 */
export type FlowViewState = FlowState | 'expired';

/** The public flow of `GET /v1/flows/{id}`: no CSRF token. */
export interface FlowView {
  id: string;
  flow_id: string;
  return_to: string | null;
  state: FlowViewState;
  issued_at: string;
  expires_at: string;
}

/** What `GET /v1/login` hands to the client that will submit the password. */
export interface StartedFlow extends FlowView {
  csrf_token: string;
}

/** Only a `created` flow inside its lifetime accepts a password. */
export function isFlowOpen(flow: FlowRecord, now: number): boolean {
  return flow.state === 'created' && flow.expires_at > now;
}

export function flowViewState(flow: FlowRecord, now: number): FlowViewState {
  return flow.state === 'created' && flow.expires_at <= now ? 'expired' : flow.state;
}

export function toFlowView(flow: FlowRecord, now: number): FlowView {
  return {
    id: flow.id,
    flow_id: flow.id,
    return_to: flow.return_to,
    state: flowViewState(flow, now),
    issued_at: toIso(flow.issued_at),
    expires_at: toIso(flow.expires_at),
  };
}

export function toStartedFlow(flow: FlowRecord, now: number): StartedFlow {
  return { ...toFlowView(flow, now), csrf_token: flow.csrf_token };
}

/**
 * The value of the cookie binding a flow to the browser it was started in (external login
 * UI mode). Derived from the CSRF token, so nothing more is stored, and it gives nothing
 * away: whoever could invert it already holds the token it guards.
 */
export function flowBinding(flow: FlowRecord): string {
  return hashToken(`tessera-flow-binding:${flow.csrf_token}`);
}

export function isBoundTo(flow: FlowRecord, presented: unknown): boolean {
  return typeof presented === 'string' && secretsEqual(flowBinding(flow), presented);
}
