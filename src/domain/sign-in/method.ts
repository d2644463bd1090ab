import type { IdentityRecord } from '../identities/identity.js';
import type { RateLimited } from '../rate-limit/rate-limiter.js';
import type { Store } from '../store.js';

/**
 * Authenticator assurance levels in NIST SP 800-63B's sense. `aal1`: one factor (a
 * password, a verified provider link). `aal2`: a second, different factor on top of a first
 * one, or a multi-factor authenticator alone (a user-verifying passkey).
 */
export type Assurance = 'aal1' | 'aal2';

/**
 * Verdicts on the submitted credentials themselves. A flow records them and counts them to
 * its attempt cap; every other refusal (a malformed body, a rate limit, an outage) is
 * thrown and counts nothing, since it says nothing about the credentials.
 */
export type CredentialFailure = 'invalid_credentials' | 'identity_disabled';

/**
 * What a verified credential must still hold when its session is minted, run inside the
 * minting transaction (completeSignIn), after the flow is claimed: a password's hash is
 * still the one that verified, a single-use proof (a code, a challenge) is used up there.
 * False when something that committed since the check took it away (a new password, a
 * racing use of the same code elsewhere): the sign-in then fails as `invalid_credentials`
 * and the transaction, flow claim included, rolls back.
 */
export type Redemption = (tx: Store) => Promise<boolean>;

/** `redeem`: what the session's transaction must still find true (see `Redemption`). */
export type SignInOutcome =
  { identity: IdentityRecord; redeem?: Redemption } | { failure: CredentialFailure };

/**
 * What a sign-in learns as it goes, for the audit row of the attempt (never for the
 * answer, which must not tell an unknown account from a wrong secret).
 */
export interface SignInNotes {
  /** The identity the credentials named, once a method found one (even if they were wrong). */
  identityId: string | null;
  /** The session the sign-in minted. */
  sessionId: string | null;
  /**
   * The method the identity signs in with (the session's `authenticated_via`), once known:
   * a first factor's route names it, a second step learns it from its flow.
   */
  signInMethod?: string;
}

export function signInNotes(): SignInNotes {
  return { identityId: null, sessionId: null };
}

/**
 * Where a sign-in happens, for methods whose proof depends on it (a passkey's challenge is
 * bound to the flow, its signature to the page's origin). The flow mechanics fill it in the
 * same way for every method; a service endpoint's sign-in has no flow and no page.
 */
export interface SignInContext {
  /** The login flow the submission belongs to. */
  flowId: string;
  /** When that flow expires: whatever a method issues for it expires with it. */
  flowExpiresAt: number;
  /** Origins of the pages that may submit to the flow: the service's own and the login UI's. */
  origins: readonly string[];
  /** The host name browsers address the service by (SERVICE_PUBLIC_URL's, else the request's). */
  host: string;
  /** The browser's first language (Accept-Language), for what a method mails; none: English. */
  locale?: string;
}

/**
 * One way to sign in, in the spirit of Ory Kratos's login strategies: an id, how a
 * submission becomes an identity, and the assurance a success gives. It knows nothing of
 * flows (state, CSRF, attempt caps, per-address limits, completion) nor of sessions: the
 * flow mechanics and `completeSignIn` do those the same way for every method.
 *
 * `Deps` is what `authenticate` uses, narrowed to the store methods it calls; the list of
 * methods (methods.ts) joins every method's `Deps` into the one the composition root
 * provides.
 */
export interface SignInMethod<Id extends string, Input, Deps> {
  /** The route suffix (`/v1/flows/{id}/<id>`), the session's `authenticated_via`. */
  readonly id: Id;
  readonly assurance: Assurance;
  /** The submitted fields as this method's input, or `validation_error`. No I/O. */
  parse(fields: Readonly<Record<string, unknown>>): Input;
  /**
   * What a submission claims, for its audit row: never a secret, bounded in size. Called
   * with no fields for a submission refused before its body was read, so the row's shape
   * does not depend on how far it got.
   */
  claim(fields: Readonly<Record<string, unknown>> | undefined): Record<string, unknown>;
  /**
   * The method's own limits for this input (per username, say), counted by the caller
   * before `authenticate`, in the same write as the flow's per-address limit. No I/O.
   */
  limits?(deps: Deps, input: Input): readonly RateLimited[];
  /**
   * The identity the input proves, or a credential failure. Refusals that are no verdict
   * on the credentials are thrown.
   */
  authenticate(
    deps: Deps,
    input: Input,
    notes: SignInNotes,
    context?: SignInContext,
  ): Promise<SignInOutcome>;
  /**
   * Only for methods that answer a challenge: issues one (bound to the flow, or to what
   * `fields` name; a later call replaces it) and returns what the client needs to answer it.
   * `fields`: the request's body but its CSRF token (a passkey's has none, an email code's
   * the address to mail).
   */
  challenge?(
    deps: Deps,
    context: SignInContext,
    fields: Readonly<Record<string, unknown>>,
  ): Promise<Record<string, unknown>>;
  /**
   * Only for a method the operator turns on or off: false, and every flow route of the
   * method answers 404 `not_found` before anything else, and no page offers it.
   */
  available?(deps: Deps): boolean;
}
