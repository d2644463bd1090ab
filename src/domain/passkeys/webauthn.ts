/**
 * The WebAuthn ceremonies, behind an interface so the domain stays free of the library that
 * does the cryptography (adapters/webauthn.ts, @simplewebauthn/server). Options are the JSON
 * the browser's `navigator.credentials` calls take (through @simplewebauthn/browser);
 * responses are the JSON it gives back.
 */

/** Who the credentials are for: the relying party id and the page origins they may be used on. */
export interface RelyingParty {
  id: string;
  name: string;
  origins: readonly string[];
}

/** The relying party settings of the composition root (SERVICE_WEBAUTHN_RP_ID and name). */
export interface RelyingPartySettings {
  /** Null: the service's host name (SERVICE_PUBLIC_URL's, else the request's). */
  id: string | null;
  name: string;
}

export interface IssuedOptions {
  options: Record<string, unknown>;
  /** The challenge in the options (base64url); the caller keeps its hash. */
  challenge: string;
}

export interface RegistrationRequest {
  rp: RelyingParty;
  /** The WebAuthn user handle: opaque bytes naming the identity. */
  userHandle: Uint8Array;
  userName: string;
  userDisplayName: string;
  /** Credential ids (base64url) the identity already has: the authenticator refuses a second. */
  exclude: { id: string; transports: string[] }[];
}

/** A credential the registration response proved, ready to store. */
export interface NewCredential {
  credentialId: string;
  publicKey: string;
  signCount: number;
  transports: string[];
  deviceType: 'single_device' | 'multi_device';
  backedUp: boolean;
}

export interface StoredCredential {
  credentialId: string;
  publicKey: string;
  signCount: number;
  transports: string[];
}

export interface VerifiedAssertion {
  signCount: number;
  deviceType: 'single_device' | 'multi_device';
  backedUp: boolean;
}

export interface WebAuthn {
  registrationOptions(request: RegistrationRequest): Promise<IssuedOptions>;
  /** The proven credential, or null for a response that does not verify (never throws for one). */
  verifyRegistration(input: {
    rp: RelyingParty;
    response: unknown;
    expectedChallenge: (challenge: string) => boolean;
  }): Promise<NewCredential | null>;
  /** Usernameless: no allowCredentials, user verification required. */
  authenticationOptions(rp: RelyingParty): Promise<IssuedOptions>;
  /**
   * The verified assertion, or null: a bad signature, another challenge, origin or RP id,
   * no user verification, or a signature counter that went backwards (a cloned authenticator).
   */
  verifyAuthentication(input: {
    rp: RelyingParty;
    response: unknown;
    credential: StoredCredential;
    expectedChallenge: (challenge: string) => boolean;
  }): Promise<VerifiedAssertion | null>;
}

/**
 * The relying party of a request: its id from configuration, else the host name browsers
 * address the service by; its origins are the pages allowed to use it.
 */
export function relyingParty(
  settings: RelyingPartySettings,
  host: string,
  origins: readonly string[],
): RelyingParty {
  return { id: settings.id ?? host, name: settings.name, origins };
}
