import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];

export type Identity = Schemas['Identity'];
export type Session = Schemas['Session'];
export type MintedSession = Schemas['MintedSession'];
export type Link = Schemas['Link'];
export type LinkSignInResult = Schemas['LinkSignInResult'];
export type Flow = Schemas['Flow'];
export type StartedFlow = Schemas['StartedFlow'];
export type FlowWithErrors = Schemas['FlowWithErrors'];
export type CompletedFlow = Schemas['CompletedFlow'];
export type RevokedSessions = Schemas['RevokedSessions'];
export type Readiness = Schemas['Readiness'];
export type Registration = Schemas['Registration'];
export type ProfileUpdate = Schemas['ProfileUpdate'];
export type EmailChange = Schemas['EmailChange'];
export type Verification = Schemas['Verification'];
export type CompletedVerification = Schemas['CompletedVerification'];
export type RecoveryFlow = Schemas['RecoveryFlow'];
export type AcceptedRecoveryCode = Schemas['AcceptedRecoveryCode'];
/** The mailed code, or the token of the mail's link: exactly one. */
export type RecoveryCodeSubmission = VerificationSubmission;
/** The proof, the new password, and the second factor when the account has one. */
export type RecoveryCompletion = RecoveryCodeSubmission & {
  password: string;
  totp_code?: string;
  recovery_code?: string;
};
export type RegistrationFlow = Schemas['RegistrationFlow'];
export type CompletedSignUp = Schemas['CompletedSignUp'];
export type LinkAttachment = Schemas['LinkAttachment'];
export type LinkKey = Schemas['LinkKey'];
/** The error model every failure answers: `{error, message?, retry_after?}`. */
export type ErrorBody = Schemas['Error'];
/** Every documented error code (the document's `Error.error` enum). */
export type ErrorCode = ErrorBody['error'];

export type { components, paths, operations } from './generated/openapi.js';
export type SessionListItem = Schemas['SessionListItem'];
export type PasswordSetting = Schemas['PasswordSetting'];
export type TwoFactorStatus = Schemas['TwoFactorStatus'];
export type Passkey = Schemas['Passkey'];
export type WebAuthnOptions = Schemas['WebAuthnOptions'];
/** The answer to an email code request: the same whether a mail went out or not. */
export type EmailCodeChallenge = Schemas['EmailCodeChallenge'];

/*
 * Request bodies the client's methods take: exact where the document is loose (the server
 * validates these in its handlers, so its schema types them as optional or `unknown`).
 * test/request-types.test.ts checks each still fits the generated schema, and that what the
 * server refuses does not compile.
 */

/** A password sign-in; an identity with a second factor adds one of its codes, not both. */
export type PasswordCredentials = { username: string; password: string } & (
  { totp_code?: string; recovery_code?: never } | { recovery_code?: string; totp_code?: never }
);
/** Exactly one of the session's id or its token. */
export type SessionRevocation =
  { session_id: string; token?: never } | { token: string; session_id?: never };
/** What a link sign-in creates the identity from, when the pair is not linked yet. */
export interface LinkSeed {
  username: string;
  display_name: string;
}
export interface LinkSignIn {
  provider: string;
  subject: string;
  /** Needed, and validated, only when the pair is not linked yet. */
  seed?: LinkSeed;
}
export interface FlowPasswordSubmission {
  username: string;
  password: string;
  /** The flow's, from `startLogin`. */
  csrf_token: string;
}
/**
 * A passkey assertion as JSON: `PublicKeyCredential.toJSON()`, or @simplewebauthn/browser's
 * `startAuthentication` result (its `AuthenticationResponseJSON`).
 */
export interface PasskeyAssertion {
  id: string;
  rawId: string;
  type: 'public-key';
  response: {
    clientDataJSON: string;
    authenticatorData: string;
    signature: string;
    userHandle?: string;
  };
  clientExtensionResults: object;
  authenticatorAttachment?: 'platform' | 'cross-platform';
}
export interface FlowPasskeySubmission {
  credential: PasskeyAssertion;
  csrf_token: string;
}
export interface FlowTotpSubmission {
  /** The authenticator app's current 6-digit code. */
  code: string;
  csrf_token: string;
}
/** The mailed code, or the token of the mail's link: exactly one. */
export type VerificationSubmission = { csrf_token: string } & (
  { code: string; token?: never } | { token: string; code?: never }
);
/** Asks for a sign-in code by mail (docs/email-code.md). */
export interface FlowEmailCodeRequest {
  /** The address to mail the code to; only a verified one of an active identity gets it. */
  address: string;
  csrf_token: string;
}
/** Starts a sign-in with an upstream provider (docs/providers.md). */
export interface FlowProviderRequest {
  /** The provider's id, as SERVICE_PROVIDERS_FILE names it. */
  provider: string;
  csrf_token: string;
}
export interface FlowProviderStart {
  /** The provider's authorization URL: navigate the browser there. */
  redirect_to: string;
}
export interface FlowEmailCodeSubmission {
  /** The address the code was mailed to (the request's answer names it, canonical). */
  address: string;
  /** The code from the mail. */
  code: string;
  csrf_token: string;
}
export interface FlowRecoveryCodeSubmission {
  /** One of the recovery codes; each works once. */
  recovery_code: string;
  csrf_token: string;
}
/** Who signs up (docs/registration.md); `email` as SERVICE_REGISTRATION_EMAIL asks. */
export interface SignUpProfile {
  username: string;
  display_name?: string;
  email?: string;
  /** The flow's, from `startRegistration`. */
  csrf_token: string;
}
export interface RegistrationPasswordSubmission extends SignUpProfile {
  password: string;
}
export interface RegistrationPasskeySubmission extends SignUpProfile {
  /** The browser's registration response as JSON (`startRegistration`'s result). */
  credential: object;
}
