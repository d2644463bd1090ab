import { toIso } from '../../lib/clock.js';
import { hashToken, secretsEqual } from '../../lib/tokens.js';

/**
 * `second_factor_required`: the first factor was right and the identity has a second
 * factor; the flow waits for it (docs/two-factor.md) and has minted nothing.
 */
export type FlowState = 'created' | 'second_factor_required' | 'completed' | 'failed';

/**
 * What a flow is for: signing in (`GET /v1/login`), or signing up (`GET /v1/registration`,
 * docs/registration.md). A flow serves only the routes of its kind.
 */
export type FlowKind = 'login' | 'registration';

export interface FlowRecord {
  id: string;
  kind: FlowKind;
  csrf_token: string;
  return_to: string | null;
  state: FlowState;
  failed_attempts: number;
  issued_at: number;
  expires_at: number;
  /**
   * Whose second factor a `second_factor_required` flow waits for; null before. A
   * registration flow holds the id its new identity will have from the start: a passkey
   * created during sign-up carries it as its user handle.
   */
  identity_id: string | null;
  /** The first factor's method id, the session's `authenticated_via` once the flow completes. */
  first_method: string | null;
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
  /** Only in state `second_factor_required`: the methods that can complete the flow. */
  second_factor?: { methods: string[] };
}

/** What `GET /v1/login` hands to the client that will submit the password. */
export interface StartedFlow extends FlowView {
  csrf_token: string;
}

/** Only a `created` flow inside its lifetime accepts a first factor (a password). */
export function isFlowOpen(flow: FlowRecord, now: number): boolean {
  return flow.state === 'created' && flow.expires_at > now;
}

/** Only a `second_factor_required` flow inside its lifetime accepts a second factor. */
export function awaitsSecondFactor(flow: FlowRecord, now: number): boolean {
  return flow.state === 'second_factor_required' && flow.expires_at > now;
}

/** States in which a flow can still be used, and so still expire. */
const LIVE_STATES: ReadonlySet<FlowState> = new Set(['created', 'second_factor_required']);

export function flowViewState(flow: FlowRecord, now: number): FlowViewState {
  return LIVE_STATES.has(flow.state) && flow.expires_at <= now ? 'expired' : flow.state;
}

/** `secondFactorMethods`: what can complete a flow waiting for its second factor. */
export function toFlowView(
  flow: FlowRecord,
  now: number,
  secondFactorMethods: readonly string[] = [],
): FlowView {
  const state = flowViewState(flow, now);
  return {
    id: flow.id,
    flow_id: flow.id,
    return_to: flow.return_to,
    state,
    issued_at: toIso(flow.issued_at),
    expires_at: toIso(flow.expires_at),
    ...(state === 'second_factor_required'
      ? { second_factor: { methods: [...secondFactorMethods] } }
      : {}),
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
