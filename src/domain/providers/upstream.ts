/**
 * The port the provider adapters implement (src/adapters/providers/): the protocol is the
 * library's (openid-client), the decisions (who signs in, what is linked) are the domain's.
 */

/** What Tessera keeps of an upstream account. */
export interface UpstreamAccount {
  /** The provider's stable id of the account (`sub`, GitHub's numeric user id). */
  subject: string;
  /** Lowercased as the provider gave it, or null. */
  email: string | null;
  /** The provider says it verified `email` (whether that is trusted is the entry's call). */
  emailVerified: boolean;
  /** A user name the provider suggests (`preferred_username`, GitHub's login), or null. */
  preferredUsername: string | null;
  /** The person's name, for a new identity's display name, or null. */
  name: string | null;
}

/** One authorization request: its values were minted by the domain and kept in the database. */
export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  nonce: string;
  /** PKCE: the adapter sends its S256 challenge; the verifier goes with the code. */
  codeVerifier: string;
}

/** The browser's return to `GET|POST /v1/providers/{id}/callback`. */
export interface AuthorizationResponse {
  /** The callback's query parameters, or its form fields for a `form_post` provider. */
  params: Readonly<Record<string, string>>;
  /** The request's time as the domain's clock says (an ID token's `exp`, `iat`). */
  now: number;
}

/**
 * Why an upstream sign-in failed, for the page and the flow's record:
 * - `denied`: the provider answered the callback with an error (the user cancelled,
 *   consent refused);
 * - `invalid_response`: its answer failed a check (state, an ID token's signature, issuer,
 *   audience, expiry or nonce, a code the provider refused);
 * - `unreachable`: the provider did not answer, or not as its documents say.
 */
export type UpstreamFailureReason = 'denied' | 'invalid_response' | 'unreachable';

export class UpstreamFailure extends Error {
  constructor(
    readonly reason: UpstreamFailureReason,
    /** For logs and the audit row: the provider's error code or the failed check; no secret. */
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'UpstreamFailure';
  }
}

/** Whether a provider's metadata (discovery) could be loaded, for `tessera provider list`. */
export type DiscoveryState =
  | { state: 'ok'; issuer: string | null; authorizationEndpoint: string }
  | { state: 'failed'; error: string };

export interface UpstreamProvider {
  readonly id: string;
  readonly type: string;
  readonly label: string;
  /** The entry's `trust_email`: whether this provider's "verified" is taken for an address. */
  readonly trustEmail: boolean;
  /**
   * How the browser comes back: `query` (a GET) or `form_post` (Apple: a cross-site POST,
   * so the browser's binding cookie must be SameSite=None).
   */
  readonly responseMode: 'query' | 'form_post';
  /** The URL to send the browser to. Throws `UpstreamFailure` (`unreachable`) when discovery fails. */
  authorizationUrl(request: AuthorizationRequest): Promise<string>;
  /**
   * The account the response proves: the code redeemed with the verifier, the ID token
   * checked against the provider's keys, audience, issuer, expiry and the nonce. Throws
   * `UpstreamFailure`.
   */
  redeem(request: AuthorizationRequest, response: AuthorizationResponse): Promise<UpstreamAccount>;
  discover(): Promise<DiscoveryState>;
}

/** The configured providers by id, in the file's order. */
export type UpstreamProviders = ReadonlyMap<string, UpstreamProvider>;
