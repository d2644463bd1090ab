import type { Clock } from '../../lib/clock.js';
import type { RateLimitRule } from '../../lib/rate.js';
import { TOKEN_FORMAT, newToken, randomSecret, secretsEqual } from '../../lib/tokens.js';
import { DomainError, type ErrorCode, notFound } from '../errors.js';
import { newId } from '../../lib/ids.js';
import { consumeRateLimit, consumeRateLimits } from '../rate-limit/rate-limiter.js';
import type { MintedSession, SessionDevice } from '../sessions/session.js';
import type { IdentityRecord } from '../identities/identity.js';
import {
  type CompleteSignInDeps,
  type SignedInBy,
  completeSignIn,
  redeemAll,
} from '../sign-in/complete-sign-in.js';
import type {
  CredentialFailure,
  SignInContext,
  SignInMethod,
  SignInNotes,
} from '../sign-in/method.js';
import type { SignInMethodId } from '../sign-in/methods.js';
import type { Store } from '../store.js';
import type { LegacyTokens } from '../tokens/legacy-tokens.js';
import { addressKey } from './address-key.js';
import {
  type FlowErrorRecord,
  type FlowKind,
  type FlowRecord,
  type FlowState,
  isFlowOpen,
} from './flow.js';
import { resolveReturnTo } from './return-to.js';

export interface FlowSettings {
  ttlMs: number;
  /** Credential failures after which the flow closes (state `failed`), whatever the method. */
  maxAttempts: number;
  /** `GET /v1/login` per client address. */
  createRule: RateLimitRule;
  /** Every submission to a flow, whatever the method, per client address. */
  submitRule: RateLimitRule;
  /**
   * SERVICE_REGISTRATION_EMAIL=verified: an identity whose address is not verified yet signs
   * in on no flow (docs/registration.md); one without an address is not concerned.
   */
  requireVerifiedEmail?: boolean;
}

/** Why a right sign-in was refused in `verified` mode; the hosted page words it by `reason`. */
export const EMAIL_VERIFICATION_REQUIRED =
  'This account’s email address is not confirmed yet: confirm it with the mailed code or link first (docs/registration.md).';

export interface FlowDeps extends CompleteSignInDeps {
  store: Pick<
    Store,
    | 'insertFlow'
    | 'findFlow'
    | 'listFlowErrors'
    | 'hitRateLimit'
    | 'hitRateLimits'
    | 'awaitSecondFactor'
    | 'transaction'
  >;
  clock: Clock;
  flows: FlowSettings;
  legacyTokens: Pick<LegacyTokens, 'accepts'>;
  /**
   * The second factors that can complete a sign-in of this identity (none: the first
   * factor is enough). Injected, so the flow names no method (docs/two-factor.md).
   */
  secondFactorsOf(identityId: string): Promise<readonly string[]>;
}

/** What finding a flow by id needs: the offline id check, then the store. */
export interface FlowLookup {
  store: Pick<Store, 'findFlow'>;
  legacyTokens: Pick<LegacyTokens, 'accepts'>;
}

export interface FlowStart {
  /** The raw `return_to` query value; absent or empty means inline mode. */
  returnTo: string | undefined;
  /** The client address the creation is counted against. */
  address: string;
  /** Origins and origin+path prefixes a `return_to` may point to. */
  allowList: readonly string[];
  /** Default `login`. */
  kind?: FlowKind;
}

/**
 * `GET /v1/login` and `GET /v1/registration`: a new flow, counted against the client
 * address (one counter for both kinds: each is a row anyone may ask for).
 */
export async function startFlow(
  deps: Pick<FlowDeps, 'store' | 'clock' | 'flows'>,
  input: FlowStart,
): Promise<FlowRecord> {
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
  const kind = input.kind ?? 'login';
  const flow: FlowRecord = {
    id: newToken('flow'),
    kind,
    csrf_token: randomSecret(),
    return_to: returnTo,
    state: 'created',
    failed_attempts: 0,
    issued_at: now,
    expires_at: now + deps.flows.ttlMs,
    identity_id: kind === 'registration' ? newId() : null,
    first_method: null,
  };
  await deps.store.insertFlow({ ...flow, token_format: TOKEN_FORMAT });
  return flow;
}

/**
 * Any flow of `kind` by id, whatever its state; an id that cannot be a flow id (its
 * checksum included, docs/tokens.md) is not looked up, and a flow of another kind is not
 * found: a registration flow signs no one in, a login flow signs no one up.
 */
export async function findFlow(
  deps: FlowLookup,
  id: string,
  kind: FlowKind = 'login',
): Promise<FlowRecord> {
  const flow = deps.legacyTokens.accepts('flow', id) ? await deps.store.findFlow(id) : undefined;
  if (!flow || flow.kind !== kind) throw notFound();
  return flow;
}

export async function findFlowWithErrors(
  deps: FlowLookup & { store: Pick<Store, 'listFlowErrors'> },
  id: string,
): Promise<{ flow: FlowRecord; errors: FlowErrorRecord[] }> {
  const flow = await findFlow(deps, id);
  return { flow, errors: await deps.store.listFlowErrors(flow.id) };
}

export interface FlowSubmission {
  flowId: string;
  /** As received: anything but the flow's token is refused, a missing one too. */
  csrfToken: unknown;
  /** The method's fields as received; the method's `parse` checks them. */
  fields: Readonly<Record<string, unknown>>;
  address: string;
  /** The browser's User-Agent and address, recorded on the session. */
  device: SessionDevice;
  /** Learns the identity the credentials named and the session, for the caller's audit row. */
  notes: SignInNotes;
  /** Where the submission comes from; no page (a test's direct call) gives methods none. */
  page?: FlowPage;
}

/** What the request tells about the page a submission or a challenge request comes from. */
export type FlowPage = Pick<SignInContext, 'origins' | 'host' | 'locale'>;

/** The flow, open, and the CSRF token its page was given; else `invalid_token`. */
export async function requireOpenFlow(
  deps: FlowLookup & Pick<FlowDeps, 'clock'>,
  flowId: string,
  csrf: unknown,
  kind: FlowKind = 'login',
): Promise<FlowRecord> {
  const flow = await findFlow(deps, flowId, kind);
  if (!isFlowOpen(flow, deps.clock.now())) throw new DomainError('invalid_token');
  if (typeof csrf !== 'string' || !secretsEqual(flow.csrf_token, csrf)) {
    throw new DomainError('invalid_token');
  }
  return flow;
}

const NO_PAGE: FlowPage = { origins: [], host: '' };

function contextOf(flow: FlowRecord, page: FlowPage): SignInContext {
  return { flowId: flow.id, flowExpiresAt: flow.expires_at, ...page };
}

/** A method the operator turned off is no route at all: `not_found`, before anything else. */
export function requireAvailable<Deps>(
  deps: Deps,
  method: Pick<SignInMethod<SignInMethodId, unknown, Deps>, 'available'>,
): void {
  if (method.available && !method.available(deps)) throw notFound();
}

/** A challenge just issued: the flow it is for and what the client needs to answer it. */
export interface IssuedChallenge {
  flow: FlowRecord;
  options: Record<string, unknown>;
}

/**
 * `POST /v1/flows/{id}/<method>/options`, for a method that answers a challenge: the flow
 * must be open and the CSRF token its own, as for a submission; the method issues the
 * challenge from the request's `fields`. Counts nothing on the flow: it proves nothing
 * about anyone.
 */
export async function challengeForFlow<Input, Deps>(
  deps: FlowDeps & Deps,
  method: SignInMethod<SignInMethodId, Input, Deps>,
  input: {
    flowId: string;
    csrfToken: unknown;
    page: FlowPage;
    fields?: Readonly<Record<string, unknown>>;
  },
): Promise<IssuedChallenge> {
  requireAvailable(deps, method);
  if (!method.challenge) throw notFound();
  const flow = await requireOpenFlow(deps, input.flowId, input.csrfToken);
  const options = await method.challenge(deps, contextOf(flow, input.page), input.fields ?? {});
  return { flow, options };
}

export interface CompletedFlow {
  returnTo: string | null;
  minted: MintedSession;
}

/** The first factor was right, and the identity has a second: the flow waits for it. */
export interface WaitingFlow {
  flow: FlowRecord;
  /** The second factors that can complete it. */
  secondFactor: readonly string[];
}

export type FlowSubmitResult =
  ({ completed: true } & CompletedFlow) | ({ completed: false } & WaitingFlow);

/**
 * What a flow records and counts to its cap: a verdict on credentials, or, on a
 * registration flow, a name or address found taken (docs/registration.md).
 */
export type FlowFailure = CredentialFailure | Extract<ErrorCode, 'username_taken' | 'email_taken'>;

/**
 * Counting comes first: its UPDATE takes the flow's row lock, so of failures racing past the
 * cap only those that were counted leave an error row, and a closed flow's list stops growing.
 * Returns whether the failure was counted: false when the flow was closed meanwhile.
 */
async function recordFailure(
  deps: Pick<FlowDeps, 'store' | 'clock' | 'flows'>,
  flowId: string,
  code: FlowFailure,
): Promise<boolean> {
  return deps.store.transaction(async (tx) => {
    if (!(await tx.countFailedAttempt(flowId, deps.flows.maxAttempts))) return false;
    await tx.recordFlowError({ flow_id: flowId, at: deps.clock.now(), error: code });
    return true;
  });
}

/**
 * A credential failure on a flow: recorded (and counted to the cap), then thrown. A flow
 * that a racing submission completed or closed meanwhile counts nothing and answers
 * `invalid_token`, as it would have had the submission come a moment later: a right code
 * read just after the winner used it is a lost race, not a wrong answer.
 */
export async function refuseOnFlow(
  deps: Pick<FlowDeps, 'store' | 'clock' | 'flows'>,
  flowId: string,
  code: FlowFailure,
): Promise<never> {
  const counted = await recordFailure(deps, flowId, code);
  throw new DomainError(counted ? code : 'invalid_token');
}

/**
 * The end of every flow sign-in, first step or second: claims the flow (`from` to
 * `completed`, one conditional UPDATE) and mints, in one transaction. Of any number of
 * right submissions racing on one flow (in any number of processes) the claim lets one
 * through; the others get `invalid_token`, as for a completed flow, and are no failed
 * attempt (their credentials were right), and nothing of theirs is spent: a code or a
 * challenge is used up in the same transaction, after the claim (`by.redeem`). A credential
 * that no longer holds there (a password changed since it verified, a code used meanwhile
 * by another sign-in) rolls the claim back and is recorded like a wrong one.
 */
export function completeFlowSignIn(
  deps: FlowDeps,
  flow: FlowRecord,
  from: FlowState,
  identity: IdentityRecord,
  by: SignedInBy,
  device: SessionDevice,
): Promise<MintedSession> {
  return refusingOnFlow(deps, flow.id, async (tx) => {
    if (!(await tx.completeFlow(flow.id, deps.clock.now(), from))) {
      throw new DomainError('invalid_token');
    }
    return completeSignIn(deps, tx, identity, by, null, device);
  });
}

/**
 * `work` in one transaction; a redemption that fails there (`invalid_credentials`) is then
 * recorded on the flow like a wrong credential (`refuseOnFlow`).
 */
async function refusingOnFlow<T>(
  deps: FlowDeps,
  flowId: string,
  work: (tx: Store) => Promise<T>,
): Promise<T> {
  try {
    return await deps.store.transaction(work);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid_credentials') {
      await refuseOnFlow(deps, flowId, error.code);
    }
    throw error;
  }
}

/**
 * `POST /v1/flows/{id}/<method>` in docs/api.md section 4's order: flow, CSRF, the method's
 * fields, the per-address limit and the method's own limits (counted in one write, in that
 * order), then the method's credentials, completion and session. The same for every method:
 * none is named here. The credentials are checked before the flow is touched; completion is
 * `completeFlowSignIn`, where exactly one of racing right submissions mints.
 *
 * A first factor that gives `aal1` to an identity with a second factor mints nothing: the
 * flow moves to `second_factor_required` (remembering the identity and the method) and
 * waits for `submitSecondFactor`.
 */
export async function submitToFlow<Input, Deps>(
  deps: FlowDeps & Deps,
  method: SignInMethod<SignInMethodId, Input, Deps>,
  input: FlowSubmission,
): Promise<FlowSubmitResult> {
  requireAvailable(deps, method);
  const flow = await requireOpenFlow(deps, input.flowId, input.csrfToken);
  const submitted = method.parse(input.fields);

  await consumeRateLimits(deps.store, deps.clock, [
    { key: `flow:ip:${addressKey(input.address)}`, rule: deps.flows.submitRule },
    ...(method.limits?.(deps, submitted) ?? []),
  ]);

  const outcome = await method.authenticate(
    deps,
    submitted,
    input.notes,
    contextOf(flow, input.page ?? NO_PAGE),
  );
  if ('failure' in outcome) return refuseOnFlow(deps, flow.id, outcome.failure);

  const { identity } = outcome;
  // The credentials were right: no failed attempt, and the flow stays open for after.
  if (deps.flows.requireVerifiedEmail && identity.email !== null && !identity.email_verified_at) {
    throw new DomainError('forbidden', EMAIL_VERIFICATION_REQUIRED, {
      reason: 'email_verification_required',
    });
  }
  const redeem = outcome.redeem ? [outcome.redeem] : [];
  const secondFactor = method.assurance === 'aal1' ? await deps.secondFactorsOf(identity.id) : [];
  if (secondFactor.length > 0) {
    // The flow waits only if the first factor still holds (a password not changed since it
    // verified); a change made later closes the waiting flow (set-password.ts).
    await refusingOnFlow(deps, flow.id, async (tx) => {
      await redeemAll(tx, redeem);
      if (!(await tx.awaitSecondFactor(flow.id, deps.clock.now(), identity.id, method.id))) {
        throw new DomainError('invalid_token');
      }
    });
    const waiting: FlowRecord = {
      ...flow,
      state: 'second_factor_required',
      identity_id: identity.id,
      first_method: method.id,
    };
    return { completed: false, flow: waiting, secondFactor };
  }

  const by = { id: method.id, assurance: method.assurance, redeem };
  const minted = await completeFlowSignIn(deps, flow, 'created', identity, by, input.device);
  input.notes.sessionId = minted.session.id;
  return { completed: true, returnTo: flow.return_to, minted };
}
