import type { RateLimitRule } from '../../lib/rate.js';
import { isWellFormedToken, newToken, randomSecret, secretsEqual } from '../../lib/tokens.js';
import { DomainError, notFound, validationError } from '../errors.js';
import {
  checkPassword,
  consumeUsernameLimit,
  type PasswordAuthDeps,
} from '../passwords/password-auth.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import { mintSession } from '../sessions/session-service.js';
import type { MintedSession } from '../sessions/session.js';
import type { Store } from '../store.js';
import { addressKey } from './address-key.js';
import { type FlowErrorRecord, type FlowRecord, isFlowOpen } from './flow.js';
import { resolveReturnTo } from './return-to.js';

export interface FlowSettings {
  ttlMs: number;
  /** Failed password attempts after which the flow closes (state `failed`). */
  maxAttempts: number;
  /** `GET /v1/login` per client address. */
  createRule: RateLimitRule;
  /** Every password submission per client address. */
  submitRule: RateLimitRule;
}

export interface FlowDeps extends PasswordAuthDeps {
  flows: FlowSettings;
}

export interface FlowStart {
  /** The raw `return_to` query value; absent or empty means inline mode. */
  returnTo: string | undefined;
  /** The client address the creation is counted against. */
  address: string;
  /** Origins and origin+path prefixes a `return_to` may point to. */
  allowList: readonly string[];
}

export async function startFlow(deps: FlowDeps, input: FlowStart): Promise<FlowRecord> {
  await consumeRateLimit(
    deps.store,
    deps.clock,
    `flow-create:ip:${addressKey(input.address)}`,
    deps.flows.createRule,
  );
  const returnTo =
    input.returnTo === undefined || input.returnTo === ''
      ? null
      : resolveReturnTo(input.returnTo, input.allowList);
  const now = deps.clock.now();
  const flow: FlowRecord = {
    id: newToken('flow'),
    csrf_token: randomSecret(),
    return_to: returnTo,
    state: 'created',
    failed_attempts: 0,
    issued_at: now,
    expires_at: now + deps.flows.ttlMs,
  };
  await deps.store.insertFlow(flow);
  return flow;
}

/** Any flow by id, whatever its state; an id that cannot be a flow id is not looked up. */
export async function findFlow(store: Store, id: string): Promise<FlowRecord> {
  const flow = isWellFormedToken('flow', id) ? await store.findFlow(id) : undefined;
  if (!flow) throw notFound();
  return flow;
}

export async function findFlowWithErrors(
  store: Store,
  id: string,
): Promise<{ flow: FlowRecord; errors: FlowErrorRecord[] }> {
  const flow = await findFlow(store, id);
  return { flow, errors: await store.listFlowErrors(flow.id) };
}

export interface PasswordSubmission {
  flowId: string;
  /** Body fields as received: anything but a string is treated as missing. */
  csrfToken: unknown;
  username: unknown;
  password: unknown;
  address: string;
  /** Learns the identity the username names, for the caller's audit row. */
  seen?: { identityId: string | null };
}

export const MISSING_CREDENTIALS = 'username and password are required';

export interface CompletedFlow {
  returnTo: string | null;
  minted: MintedSession;
}

/** Failures that are the submitter's credentials: recorded on the flow and counted to its cap. */
const CREDENTIAL_FAILURES = new Set(['invalid_credentials', 'identity_disabled']);

/**
 * Counting comes first: its UPDATE takes the flow's row lock, so of failures racing past the
 * cap only those that were counted leave an error row, and a closed flow's list stops growing.
 */
async function recordFailure(deps: FlowDeps, flowId: string, code: string): Promise<void> {
  await deps.store.transaction(async (tx) => {
    if (!(await tx.countFailedAttempt(flowId, deps.flows.maxAttempts))) return;
    await tx.recordFlowError({ flow_id: flowId, at: deps.clock.now(), error: code });
  });
}

/**
 * `POST /v1/flows/{id}/password` in SPEC 4.9's order: flow, CSRF, rate limits, username,
 * password, completion, session. The password is verified before the flow is touched, and
 * completion is one conditional UPDATE: of any number of correct submissions racing on one
 * flow (in any number of processes) exactly one completes it, and only that one mints.
 */
export async function submitPassword(
  deps: FlowDeps,
  input: PasswordSubmission,
): Promise<CompletedFlow> {
  const flow = await findFlow(deps.store, input.flowId);
  if (!isFlowOpen(flow, deps.clock.now())) throw new DomainError('invalid_token');

  const csrf = input.csrfToken;
  if (typeof csrf !== 'string' || !secretsEqual(flow.csrf_token, csrf)) {
    throw new DomainError('invalid_token');
  }
  const { username, password } = input;
  if (typeof username !== 'string' || typeof password !== 'string') {
    throw validationError(MISSING_CREDENTIALS);
  }

  await consumeRateLimit(
    deps.store,
    deps.clock,
    `flow:ip:${addressKey(input.address)}`,
    deps.flows.submitRule,
  );
  // Malformed usernames are not counted (see consumeUsernameLimit) but still cost one
  // dummy verification below, like any unknown user.
  await consumeUsernameLimit(deps, username);

  let identity;
  try {
    identity = await checkPassword(deps, username, password, input.seen);
  } catch (error) {
    if (error instanceof DomainError && CREDENTIAL_FAILURES.has(error.code)) {
      await recordFailure(deps, flow.id, error.code);
    }
    throw error;
  }

  const minted = await deps.store.transaction(async (tx) => {
    if (!(await tx.completeFlow(flow.id, deps.clock.now()))) {
      throw new DomainError('invalid_token');
    }
    return mintSession(deps, tx, identity, 'password');
  });
  return { returnTo: flow.return_to, minted };
}
