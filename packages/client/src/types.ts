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
export type PasswordCredentials = Schemas['PasswordCredentials'];
export type ProfileUpdate = Schemas['ProfileUpdate'];
export type SessionRevocation = Schemas['SessionRevocation'];
export type LinkSignIn = Schemas['LinkSignIn'];
export type LinkAttachment = Schemas['LinkAttachment'];
export type LinkKey = Schemas['LinkKey'];
export type FlowPasswordSubmission = Schemas['FlowPasswordSubmission'];
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
export type FlowPasskeySubmission = Schemas['FlowPasskeySubmission'];
export type FlowTotpSubmission = Schemas['FlowTotpSubmission'];
export type FlowRecoveryCodeSubmission = Schemas['FlowRecoveryCodeSubmission'];
