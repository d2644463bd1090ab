/**
 * The browser part of the client: the calls a page makes itself, with the session cookie
 * (`credentials: 'include'`): the session, and an operator's own login and sign-up UI. Imports nothing Node-only; the test suite bundles it for the
 * browser to keep it so. The page's origin must be in `SERVICE_SESSION_CORS_ORIGINS` (whoami,
 * logout) and, for the flow calls, be the login UI (`SERVICE_LOGIN_UI_URL`).
 */
import createClient from 'openapi-fetch';
import { unwrap } from './call.js';
import { loginPageUrl } from './login-url.js';
import { TesseraError } from './errors.js';
import type { paths } from './generated/openapi.js';
import { isAcceptableToken } from './tokens.js';
import { createTransport, type TransportOptions } from './transport.js';
import type {
  CompletedFlow,
  CompletedSignUp,
  FlowPasswordSubmission,
  FlowProviderRequest,
  FlowProviderStart,
  FlowWithErrors,
  RegistrationFlow,
  RegistrationPasswordSubmission,
  Session,
  StartedFlow,
} from './types.js';

export { TesseraError, isTesseraError } from './errors.js';
export { checkToken, isAcceptableToken, TOKEN_PREFIX } from './tokens.js';
export type * from './types.js';

export interface BrowserClientOptions extends TransportOptions {
  /** Tessera's URL as the browser reaches it. */
  baseUrl: string;
  /** Send flow ids failing their checksum instead of refusing them offline (default false). */
  acceptLegacyTokens?: boolean;
}

export interface BrowserClient {
  /** The signed-in session, from the cookie; rejects with `invalid_token` when there is none. */
  whoami(options?: { signal?: AbortSignal }): Promise<Session>;
  /** The session, or null when the browser is not signed in (no cookie, expired, revoked). */
  currentSession(options?: { signal?: AbortSignal }): Promise<Session | null>;
  startLogin(options?: { returnTo?: string; signal?: AbortSignal }): Promise<StartedFlow>;
  getFlow(flowId: string, options?: { signal?: AbortSignal }): Promise<FlowWithErrors>;
  submitFlowPassword(
    flowId: string,
    submission: FlowPasswordSubmission,
    options?: { signal?: AbortSignal },
  ): Promise<CompletedFlow>;
  /**
   * Starts a sign-in with an upstream provider: navigate the browser to `redirect_to`; the
   * provider sends it back to Tessera, and Tessera to the login UI or `return_to`.
   */
  startFlowProvider(
    flowId: string,
    request: FlowProviderRequest,
    options?: { signal?: AbortSignal },
  ): Promise<FlowProviderStart>;
  /** A registration flow (SERVICE_REGISTRATION=open; else `not_found`), docs/registration.md. */
  startRegistration(options?: {
    returnTo?: string;
    signal?: AbortSignal;
  }): Promise<RegistrationFlow>;
  /** Signs up with a password; the session cookie is set unless the address must be verified first. */
  submitRegistrationPassword(
    flowId: string,
    submission: RegistrationPasswordSubmission,
    options?: { signal?: AbortSignal },
  ): Promise<CompletedSignUp>;
  /** Signs up with an upstream provider: navigate the browser to `redirect_to`. */
  startRegistrationProvider(
    flowId: string,
    request: FlowProviderRequest,
    options?: { signal?: AbortSignal },
  ): Promise<FlowProviderStart>;
  /** Ends the session and clears the cookie; succeeds also when there was none. */
  logout(options?: { signal?: AbortSignal }): Promise<void>;
  /** The hosted login page's URL, landing on `returnTo` once signed in. */
  loginPageUrl(returnTo?: string): string;
}

export function createBrowserClient(options: BrowserClientOptions): BrowserClient {
  const raw = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    credentials: 'include',
    fetch: createTransport(options),
  });
  const checkFlow = (flowId: string) => {
    if (!isAcceptableToken('flow', flowId, { acceptLegacyTokens: options.acceptLegacyTokens })) {
      throw new TesseraError('not_found', 404);
    }
  };
  const whoami: BrowserClient['whoami'] = (o) =>
    unwrap(raw.GET('/v1/whoami', { signal: o?.signal }), o?.signal);
  return {
    whoami,
    currentSession: async (o) => {
      try {
        return await whoami(o);
      } catch (error) {
        if (error instanceof TesseraError && error.status === 401) return null;
        throw error;
      }
    },
    startLogin: (o) =>
      unwrap(
        raw.GET('/v1/login', {
          params: { query: o?.returnTo === undefined ? {} : { return_to: o.returnTo } },
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    getFlow: async (flowId, o) => {
      checkFlow(flowId);
      return unwrap(
        raw.GET('/v1/flows/{id}', { params: { path: { id: flowId } }, signal: o?.signal }),
        o?.signal,
      );
    },
    submitFlowPassword: async (flowId, submission, o) => {
      checkFlow(flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/password', {
          params: { path: { id: flowId } },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    startFlowProvider: async (flowId, request, o) => {
      checkFlow(flowId);
      return unwrap(
        raw.POST('/v1/flows/{id}/provider', {
          params: { path: { id: flowId } },
          body: request,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    startRegistration: (o) =>
      unwrap(
        raw.GET('/v1/registration', {
          params: { query: o?.returnTo === undefined ? {} : { return_to: o.returnTo } },
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      ),
    submitRegistrationPassword: async (flowId, submission, o) => {
      checkFlow(flowId);
      return unwrap(
        raw.POST('/v1/registration/{id}/password', {
          params: { path: { id: flowId } },
          body: submission,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    startRegistrationProvider: async (flowId, request, o) => {
      checkFlow(flowId);
      return unwrap(
        raw.POST('/v1/registration/{id}/provider', {
          params: { path: { id: flowId } },
          body: request,
          headers: { accept: 'application/json' },
          signal: o?.signal,
        }),
        o?.signal,
      );
    },
    logout: async (o) => {
      await unwrap(raw.POST('/v1/logout', { signal: o?.signal }), o?.signal);
    },
    loginPageUrl: (returnTo) => loginPageUrl(options.baseUrl, returnTo),
  };
}
