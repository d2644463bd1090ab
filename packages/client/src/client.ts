import createClient, { type Client } from 'openapi-fetch';
import { TesseraError } from './errors.js';
import { unwrap } from './call.js';
import { loginPageUrl } from './login-url.js';
import type { paths } from './generated/openapi.js';
import { isAcceptableToken } from './tokens.js';
import { headerValue, requireBaseUrl, requireServiceToken } from './options.js';
import { createTransport, type TransportOptions } from './transport.js';
import type {
  CompletedFlow,
  EmailCodeChallenge,
  FlowEmailCodeRequest,
  FlowEmailCodeSubmission,
  FlowProviderRequest,
  FlowProviderStart,
  CompletedSignUp,
  FlowPasskeySubmission,
  FlowPasswordSubmission,
  FlowRecoveryCodeSubmission,
  FlowTotpSubmission,
  FlowWithErrors,
  Identity,
  Link,
  LinkAttachment,
  LinkKey,
  LinkSignIn,
  LinkSignInResult,
  MintedSession,
  Passkey,
  PasswordCredentials,
  PasswordSetting,
  ProfileUpdate,
  EmailChange,
  Readiness,
  Registration,
  RegistrationFlow,
  RegistrationPasskeySubmission,
  RegistrationPasswordSubmission,
  SignUpProfile,
  RevokedSessions,
  Session,
  SessionListItem,
  SessionRevocation,
  StartedFlow,
  TwoFactorStatus,
  CompletedVerification,
  AcceptedRecoveryCode,
  RecoveryCodeSubmission,
  RecoveryCompletion,
  RecoveryFlow,
  Verification,
  VerificationSubmission,
  WebAuthnOptions,
} from './types.js';

export interface TesseraClientOptions extends TransportOptions {
  /** Tessera's base URL, e.g. `https://auth.example.com`. */
  baseUrl: string;
  /** A service token (`tess_svc_…`) for the service endpoints; its grants decide what works. */
  serviceToken?: string;
  /**
   * Accept tokens whose checksum fails (minted before Tessera's tokens carried one) instead
   * of refusing them offline. Default false.
   */
  acceptLegacyTokens?: boolean;
  /** Extra headers on every request (a User-Agent, say). */
  headers?: Record<string, string>;
}

/** Per call: an abort signal and, for a `browser_proxy` caller, the end user's address. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Sent as `X-Service-Client-Ip` (needs the `browser_proxy` grant). */
  clientIp?: string;
}

/** The raw typed openapi-fetch client, for endpoints this wrapper does not name yet. */
export type RawClient = Client<paths, 'application/json'>;

export interface TesseraClient {
  readonly raw: RawClient;
  /** The base URL the client was made with. */
  readonly baseUrl: string;
  /** Whether tokens failing their checksum are sent on rather than refused offline. */
  readonly acceptLegacyTokens: boolean;
  getIdentity(id: string, options?: CallOptions): Promise<Identity>;
  lookupIdentityByUsername(username: string, options?: CallOptions): Promise<Identity>;
  /** The identity with this address, in any case (404 when none). */
  lookupIdentityByEmail(email: string, options?: CallOptions): Promise<Identity>;
  /** Sets, verifies or removes (`email: null`) the address; 409 `email_taken` when another has it. */
  setEmail(id: string, change: EmailChange, options?: CallOptions): Promise<Identity>;
  updateProfile(id: string, update: ProfileUpdate, options?: CallOptions): Promise<Identity>;
  register(registration: Registration, options?: CallOptions): Promise<Identity>;
  registerAndAuthenticate(
    registration: Registration,
    options?: CallOptions,
  ): Promise<MintedSession>;
  authenticatePassword(
    credentials: PasswordCredentials,
    options?: CallOptions,
  ): Promise<MintedSession>;
  verifySession(token: string, options?: CallOptions): Promise<Session>;
  revokeSession(revocation: SessionRevocation, options?: CallOptions): Promise<void>;
  revokeIdentitySessions(id: string, options?: CallOptions): Promise<RevokedSessions>;
  authenticateLink(signIn: LinkSignIn, options?: CallOptions): Promise<LinkSignInResult>;
  createLink(id: string, link: LinkAttachment, options?: CallOptions): Promise<Link>;
  listLinks(id: string, options?: CallOptions): Promise<Link[]>;
  deleteLink(id: string, key: LinkKey, options?: CallOptions): Promise<void>;
  /** The session of a session token, read as the browser's cookie would be. */
  whoami(sessionToken: string, options?: CallOptions): Promise<Session>;
  /** Revokes the session of a session token, as the browser's logout would. */
  logout(sessionToken: string, options?: CallOptions): Promise<void>;
  startLogin(start?: { returnTo?: string } & CallOptions): Promise<StartedFlow>;
  getFlow(flowId: string, options?: CallOptions): Promise<FlowWithErrors>;
  submitFlowPassword(
    flowId: string,
    submission: FlowPasswordSubmission,
    options?: CallOptions,
  ): Promise<CompletedFlow>;
  /** A passkey challenge for the flow (WebAuthn request options for the browser). */
  challengeFlowPasskey(
    flowId: string,
    csrfToken: string,
    options?: CallOptions,
  ): Promise<WebAuthnOptions>;
  submitFlowPasskey(
    flowId: string,
    submission: FlowPasskeySubmission,
    options?: CallOptions,
  ): Promise<CompletedFlow>;
  /**
   * Mails a sign-in code to the address when it is an account's verified one; the same
   * answer either way (docs/email-code.md). Only with SERVICE_SIGN_IN_EMAIL_CODE=on.
   */
  challengeFlowEmailCode(
    flowId: string,
    request: FlowEmailCodeRequest,
    options?: CallOptions,
  ): Promise<EmailCodeChallenge>;
  submitFlowEmailCode(
    flowId: string,
    submission: FlowEmailCodeSubmission,
    options?: CallOptions,
  ): Promise<CompletedFlow>;
  /**
   * Starts a sign-in with an upstream provider: navigate the browser to `redirect_to`; the
   * provider sends it back to Tessera's callback, which completes the flow.
   */
  startFlowProvider(
    flowId: string,
    request: FlowProviderRequest,
    options?: CallOptions,
  ): Promise<FlowProviderStart>;
  /** The second step of a flow in `second_factor_required`. */
  submitFlowTotp(
    flowId: string,
    submission: FlowTotpSubmission,
    options?: CallOptions,
  ): Promise<CompletedFlow>;
  submitFlowRecoveryCode(
    flowId: string,
    submission: FlowRecoveryCodeSubmission,
    options?: CallOptions,
  ): Promise<CompletedFlow>;
  /** An email verification flow (docs/verification.md): its state and CSRF token. */
  getVerification(id: string, options?: CallOptions): Promise<Verification>;
  /** Confirms the address with the mailed code or the link's token; sent once, never repeated. */
  submitVerification(
    id: string,
    submission: VerificationSubmission,
    options?: CallOptions,
  ): Promise<CompletedVerification>;
  /** Mails a new code for a pending verification (limited per identity). */
  resendVerification(id: string, csrfToken: string, options?: CallOptions): Promise<Verification>;
  /**
   * A recovery flow (docs/recovery.md): a new one (with `returnTo`, optional) when `flowId`
   * is omitted, else that flow; its state and CSRF token.
   */
  getRecovery(
    flowId?: string,
    options?: CallOptions & { returnTo?: string },
  ): Promise<RecoveryFlow>;
  /** Gives the address; the answer is the same whether or not it belongs to an account. */
  submitRecoveryEmail(
    flowId: string,
    csrfToken: string,
    email: string,
    options?: CallOptions,
  ): Promise<RecoveryFlow>;
  /** Mails a new code to the address given (limited per address). */
  resendRecovery(flowId: string, csrfToken: string, options?: CallOptions): Promise<RecoveryFlow>;
  /** Checks the mailed code without spending it: and which second factor the password needs. */
  checkRecoveryCode(
    flowId: string,
    submission: RecoveryCodeSubmission,
    options?: CallOptions,
  ): Promise<AcceptedRecoveryCode>;
  /** Sets the new password and signs in (the cookie); sent once, never repeated. */
  completeRecovery(
    flowId: string,
    submission: RecoveryCompletion,
    options?: CallOptions,
  ): Promise<CompletedFlow>;
  /** The identity's live sessions with their device, newest first (`introspect`). */
  listIdentitySessions(id: string, options?: CallOptions): Promise<SessionListItem[]>;
  /** Sets a password; other sessions end unless `revoke_sessions: false` (`direct_auth`). */
  setIdentityPassword(id: string, setting: PasswordSetting, options?: CallOptions): Promise<void>;
  getIdentitySecondFactor(id: string, options?: CallOptions): Promise<TwoFactorStatus>;
  /** Removes the authenticator and recovery codes (`direct_auth`). */
  resetIdentitySecondFactor(id: string, options?: CallOptions): Promise<void>;
  listIdentityPasskeys(id: string, options?: CallOptions): Promise<Passkey[]>;
  /** Removes every passkey of the identity (`direct_auth`). */
  resetIdentityPasskeys(id: string, options?: CallOptions): Promise<{ removed: number }>;
  deleteIdentityPasskey(id: string, passkeyId: string, options?: CallOptions): Promise<void>;
  /** A registration flow (SERVICE_REGISTRATION=open; else `not_found`), docs/registration.md. */
  startRegistration(start?: { returnTo?: string } & CallOptions): Promise<RegistrationFlow>;
  /** Signs up with a password: the identity, its session (null when verified addresses are required) and its verification. */
  submitRegistrationPassword(
    flowId: string,
    submission: RegistrationPasswordSubmission,
    options?: CallOptions,
  ): Promise<CompletedSignUp>;
  /** Passkey creation options for a sign-up (WebAuthn creation options for the browser). */
  challengeRegistrationPasskey(
    flowId: string,
    profile: SignUpProfile,
    options?: CallOptions,
  ): Promise<WebAuthnOptions>;
  /** Signs up with the passkey the browser created: no password at all. */
  submitRegistrationPasskey(
    flowId: string,
    submission: RegistrationPasskeySubmission,
    options?: CallOptions,
  ): Promise<CompletedSignUp>;
  /**
   * Signs up with an upstream provider: navigate the browser to `redirect_to`. The sign-up
   * goes on as a provider sign-in on a new login flow (docs/providers.md).
   */
  startRegistrationProvider(
    flowId: string,
    request: FlowProviderRequest,
    options?: CallOptions,
  ): Promise<FlowProviderStart>;
  /** The URL of the hosted login page, landing on `returnTo` once signed in. */
  loginPageUrl(returnTo?: string): string;
  healthz(options?: CallOptions): Promise<void>;
  readyz(options?: CallOptions): Promise<Readiness>;
  metrics(options?: CallOptions): Promise<string>;
  getOpenApiDocument(options?: CallOptions): Promise<Record<string, unknown>>;
}

const SESSION_COOKIE = 'service_session';

/**
 * A client for Tessera's HTTP API. Requests go through Node's global fetch (undici), which
 * keeps connections alive and reuses them across calls; pass `fetch` to use another (an
 * undici Agent with other pool settings, say).
 */
export function createTesseraClient(options: TesseraClientOptions): TesseraClient {
  const acceptLegacyTokens = options.acceptLegacyTokens === true;
  requireBaseUrl(options.baseUrl);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    headers[name] = headerValue(`headers.${name}`, value, name);
  }
  if (options.serviceToken !== undefined) {
    headers.authorization = `Bearer ${requireServiceToken(options.serviceToken, acceptLegacyTokens)}`;
  }
  const raw = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    headers,
    fetch: createTransport(options),
  });

  const proxyHeader = (o?: CallOptions) =>
    o?.clientIp === undefined
      ? undefined
      : { 'x-service-client-ip': headerValue('clientIp', o.clientIp) };
  const cookieHeader = (token: string) => ({ cookie: `${SESSION_COOKIE}=${token}` });
  const refuseOffline = (kind: 'session' | 'flow', value: string) => {
    if (isAcceptableToken(kind, value, { acceptLegacyTokens })) return;
    throw kind === 'session'
      ? new TesseraError('invalid_token', 401)
      : new TesseraError('not_found', 404);
  };

  return {
    raw,
    baseUrl: options.baseUrl,
    acceptLegacyTokens,
    getIdentity: (id, o) =>
      unwrap(
        raw.GET('/v1/identities/{id}', { params: { path: { id } }, signal: o?.signal }),
        o?.signal,
      ),
    lookupIdentityByUsername: (username, o) =>
      unwrap(
        raw.GET('/v1/identities', { params: { query: { username } }, signal: o?.signal }),
        o?.signal,
      ),
    lookupIdentityByEmail: (email, o) =>
      unwrap(
        raw.GET('/v1/identities', { params: { query: { email } }, signal: o?.signal }),
        o?.signal,
      ),
    setEmail: (id, change, o) =>
      unwrap(
        raw.PUT('/v1/identities/{id}/email', {
          params: { path: { id } },
          body: change,
          signal: o?.signal,
        }),
        o?.signal,
      ),
    updateProfile: (id, update, o) =>
      unwrap(
        raw.PATCH('/v1/identities/{id}/profile', {
          params: { path: { id } },
          body: update,
          signal: o?.signal,
        }),
        o?.signal,
      ),
    register: (registration, o) =>
      unwrap(raw.POST('/v1/register', { body: registration, signal: o?.signal }), o?.signal),
    registerAndAuthenticate: (registration, o) =>
      unwrap(
        raw.POST('/v1/register-and-authenticate', { body: registration, signal: o?.signal }),
        o?.signal,
      ),
    authenticatePassword: async (credentials, o) =>
      unwrap(
        raw.POST('/v1/authenticate/password', {
          body: credentials,
          params: { header: proxyHeader(o) },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    verifySession: async (token, o) => {
      refuseOffline('session', token);
      return unwrap(
        raw.POST('/v1/sessions/verify', { body: { token }, signal: o?.signal }),
        o?.signal,
      );
    },
    // A revocation always reaches the server: it is never skipped on the client's guess.
    revokeSession: async (revocation, o) => {
      await unwrap(
        raw.POST('/v1/sessions/revoke', { body: revocation, signal: o?.signal }),
        o?.signal,
      );
    },
    revokeIdentitySessions: (id, o) =>
      unwrap(
        raw.POST('/v1/identities/{id}/revoke-sessions', {
          params: { path: { id } },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    authenticateLink: (signIn, o) =>
      unwrap(raw.POST('/v1/authenticate/link', { body: signIn, signal: o?.signal }), o?.signal),
    createLink: (id, link, o) =>
      unwrap(
        raw.POST('/v1/identities/{id}/links', {
          params: { path: { id } },
          body: link,
          signal: o?.signal,
        }),
        o?.signal,
      ),
    listLinks: (id, o) =>
      unwrap(
        raw.GET('/v1/identities/{id}/links', { params: { path: { id } }, signal: o?.signal }),
        o?.signal,
      ),
    deleteLink: async (id, key, o) => {
      await unwrap(
        raw.DELETE('/v1/identities/{id}/links', {
          params: { path: { id } },
          body: key,
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    whoami: async (sessionToken, o) => {
      refuseOffline('session', sessionToken);
      return unwrap(
        raw.GET('/v1/whoami', {
          headers: { ...cookieHeader(sessionToken), authorization: null },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    logout: async (sessionToken, o) => {
      await unwrap(
        raw.POST('/v1/logout', {
          headers: { ...cookieHeader(sessionToken), authorization: null },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    startLogin: async (start) =>
      unwrap(
        raw.GET('/v1/login', {
          params: {
            query: start?.returnTo === undefined ? {} : { return_to: start.returnTo },
            header: proxyHeader(start),
          },
          headers: { accept: 'application/json' },
          signal: start?.signal,
        }),
        start?.signal,
      ),
    getFlow: async (flowId, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.GET('/v1/flows/{id}', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    submitFlowPassword: async (flowId, submission, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/password', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    challengeFlowPasskey: async (flowId, csrfToken, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/passkey/options', {
          params: { path: { id: flowId } },
          body: { csrf_token: csrfToken },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    submitFlowPasskey: async (flowId, submission, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/passkey', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    challengeFlowEmailCode: async (flowId, request, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/email_code/options', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: request,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    startFlowProvider: async (flowId, request, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/provider', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: request,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    submitFlowEmailCode: async (flowId, submission, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/email_code', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    submitFlowTotp: async (flowId, submission, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/totp', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    submitFlowRecoveryCode: async (flowId, submission, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/recovery_code', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    startRegistrationProvider: async (flowId, request, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/registration/{id}/provider', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: request,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    startRegistration: async (start) =>
      unwrap(
        raw.GET('/v1/registration', {
          params: {
            query: start?.returnTo === undefined ? {} : { return_to: start.returnTo },
            header: proxyHeader(start),
          },
          headers: { accept: 'application/json' },
          signal: start?.signal,
        }),
        start?.signal,
      ),
    submitRegistrationPassword: async (flowId, submission, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/registration/{id}/password', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    challengeRegistrationPasskey: async (flowId, profile, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/registration/{id}/passkey/options', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: profile,
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    submitRegistrationPasskey: async (flowId, submission, o) => {
      refuseOffline('flow', flowId);
      return unwrap(
        raw.POST('/v1/registration/{id}/passkey', {
          params: { path: { id: flowId }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    getVerification: async (id, o) =>
      unwrap(
        raw.GET('/v1/verification', {
          params: { query: { id }, header: proxyHeader(o) },
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    submitVerification: async (id, submission, o) =>
      unwrap(
        raw.POST('/v1/verification/{id}', {
          params: { path: { id }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    resendVerification: async (id, csrfToken, o) =>
      unwrap(
        raw.POST('/v1/verification/{id}/resend', {
          params: { path: { id }, header: proxyHeader(o) },
          body: { csrf_token: csrfToken },
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    getRecovery: async (flowId, o) =>
      unwrap(
        raw.GET('/v1/recovery', {
          params: {
            query: {
              ...(flowId === undefined ? {} : { flow: flowId }),
              ...(o?.returnTo === undefined ? {} : { return_to: o.returnTo }),
            },
            header: proxyHeader(o),
          },
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    submitRecoveryEmail: async (id, csrfToken, email, o) =>
      unwrap(
        raw.POST('/v1/recovery/{id}/email', {
          params: { path: { id }, header: proxyHeader(o) },
          body: { csrf_token: csrfToken, email },
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    resendRecovery: async (id, csrfToken, o) =>
      unwrap(
        raw.POST('/v1/recovery/{id}/resend', {
          params: { path: { id }, header: proxyHeader(o) },
          body: { csrf_token: csrfToken },
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    checkRecoveryCode: async (id, submission, o) =>
      unwrap(
        raw.POST('/v1/recovery/{id}/code', {
          params: { path: { id }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    completeRecovery: async (id, submission, o) =>
      unwrap(
        raw.POST('/v1/recovery/{id}', {
          params: { path: { id }, header: proxyHeader(o) },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    listIdentitySessions: (id, o) =>
      unwrap(
        raw.GET('/v1/identities/{id}/sessions', { params: { path: { id } }, signal: o?.signal }),
        o?.signal,
      ),
    setIdentityPassword: async (id, setting, o) => {
      await unwrap(
        raw.PUT('/v1/identities/{id}/password', {
          params: { path: { id } },
          body: setting,
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    getIdentitySecondFactor: (id, o) =>
      unwrap(
        raw.GET('/v1/identities/{id}/second-factor', {
          params: { path: { id } },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    resetIdentitySecondFactor: async (id, o) => {
      await unwrap(
        raw.DELETE('/v1/identities/{id}/second-factor', {
          params: { path: { id } },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    listIdentityPasskeys: (id, o) =>
      unwrap(
        raw.GET('/v1/identities/{id}/passkeys', { params: { path: { id } }, signal: o?.signal }),
        o?.signal,
      ),
    resetIdentityPasskeys: (id, o) =>
      unwrap(
        raw.DELETE('/v1/identities/{id}/passkeys', {
          params: { path: { id } },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    deleteIdentityPasskey: async (id, passkeyId, o) => {
      await unwrap(
        raw.DELETE('/v1/identities/{id}/passkeys/{passkey_id}', {
          params: { path: { id, passkey_id: passkeyId } },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    loginPageUrl: (returnTo) => loginPageUrl(options.baseUrl, returnTo),
    healthz: async (o) => {
      await unwrap(raw.GET('/healthz', { parseAs: 'text', signal: o?.signal }), o?.signal);
    },
    readyz: (o) => unwrap(raw.GET('/readyz', { signal: o?.signal }), o?.signal),
    metrics: (o) => unwrap(raw.GET('/metrics', { parseAs: 'text', signal: o?.signal }), o?.signal),
    getOpenApiDocument: (o) =>
      unwrap(raw.GET('/v1/openapi.json', { signal: o?.signal }), o?.signal) as Promise<
        Record<string, unknown>
      >,
  };
}
