import { createTesseraClient, type TesseraClient, type TesseraClientOptions } from './client.js';
import { loginPageUrl } from './login-url.js';
import { TesseraError } from './errors.js';
import { isAcceptableToken } from './tokens.js';
import type { ErrorCode, Session } from './types.js';

export interface SessionGuardOptions extends TesseraClientOptions {
  /**
   * How a token is checked. `verify` (the default with a `serviceToken`): `POST
   * /v1/sessions/verify` with a service token holding `introspect`. `whoami` (the default
   * without one): `GET /v1/whoami` with the cookie, for an app that shares the session
   * cookie with Tessera (same site, `SERVICE_COOKIE_DOMAIN`), needing no service token.
   */
  check?: 'verify' | 'whoami';
  /** The session cookie's name (default `service_session`). */
  cookieName?: string;
  /**
   * Send a browser with no valid session (a GET or HEAD accepting HTML) to the hosted login
   * page, with `return_to` set to the URL it asked for. Other requests get 401. Default false.
   */
  loginRedirect?: boolean;
  /** Tessera's URL as browsers reach it, for the login redirect (default `baseUrl`). */
  publicUrl?: string;
  /**
   * This app's origin as browsers see it (`https://app.example`), for `return_to`. Default:
   * the request's scheme and Host header; set it behind a proxy, and in production.
   */
  appUrl?: string;
  /** When false, a request without a valid session goes on with no session (default true). */
  required?: boolean;
}

/** A checked session and the token it came from. */
export interface TesseraRequestSession {
  session: Session;
  token: string;
}

export type SessionOutcome =
  | { kind: 'session'; session: Session; token: string }
  /** No cookie, a token refused offline, or one Tessera refused. */
  | { kind: 'refused'; status: 401 | 403; code: ErrorCode }
  /** Tessera could not answer (or the service token is wrong): not the user's fault. */
  | { kind: 'failed'; error: TesseraError };

/** What the framework adapter should do with a request. */
export type GuardDecision =
  | { action: 'continue'; session?: TesseraRequestSession }
  | { action: 'redirect'; location: string }
  | { action: 'answer'; status: number; body: { error: ErrorCode } };

/** The parts of a request the guard reads, whatever the framework. */
export interface GuardRequest {
  method: string;
  /** Path and query as the client asked for them. */
  url: string;
  cookie: string | undefined;
  accept: string | undefined;
  host: string | undefined;
  protocol: string;
}

export interface SessionGuard {
  readonly client: TesseraClient;
  /** Checks the session cookie's token: offline first, then with Tessera. */
  check(cookieHeader: string | undefined): Promise<SessionOutcome>;
  /** Checks and decides: continue (with the session), redirect to login, or answer. */
  decide(request: GuardRequest): Promise<GuardDecision>;
}

const REFUSED_CODES = new Set<ErrorCode>(['invalid_token', 'session_expired', 'identity_disabled']);

/** The value of cookie `name` in a Cookie header (the first one, as browsers send the most specific first). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}

export function createSessionGuard(options: SessionGuardOptions): SessionGuard {
  const client = createTesseraClient(options);
  const mode = options.check ?? (options.serviceToken === undefined ? 'whoami' : 'verify');
  if (mode === 'verify' && options.serviceToken === undefined) {
    throw new TesseraError(
      'validation_error',
      0,
      "check: 'verify' needs a serviceToken with the introspect grant",
    );
  }
  const cookieName = options.cookieName ?? 'service_session';
  const required = options.required ?? true;

  async function check(cookieHeader: string | undefined): Promise<SessionOutcome> {
    const token = readCookie(cookieHeader, cookieName);
    if (!isAcceptableToken('session', token, { acceptLegacyTokens: client.acceptLegacyTokens })) {
      return { kind: 'refused', status: 401, code: 'invalid_token' };
    }
    try {
      const session =
        mode === 'verify' ? await client.verifySession(token) : await client.whoami(token);
      return { kind: 'session', session, token };
    } catch (error) {
      if (!(error instanceof TesseraError)) throw error;
      if (REFUSED_CODES.has(error.code)) {
        return {
          kind: 'refused',
          status: error.code === 'identity_disabled' ? 403 : 401,
          code: error.code,
        };
      }
      return { kind: 'failed', error };
    }
  }

  async function decide(request: GuardRequest): Promise<GuardDecision> {
    const outcome = await check(request.cookie);
    if (outcome.kind === 'session') {
      return { action: 'continue', session: { session: outcome.session, token: outcome.token } };
    }
    if (outcome.kind === 'failed') {
      const unavailable = outcome.error.retryable;
      return {
        action: 'answer',
        status: unavailable ? 503 : 500,
        body: { error: unavailable ? 'unavailable' : 'internal_error' },
      };
    }
    if (!required) return { action: 'continue' };
    if (options.loginRedirect && outcome.status === 401 && wantsPage(request)) {
      const appUrl = options.appUrl ?? `${request.protocol}://${request.host ?? 'localhost'}`;
      const returnTo = new URL(request.url, appUrl).toString();
      return {
        action: 'redirect',
        location: loginPageUrl(options.publicUrl ?? options.baseUrl, returnTo),
      };
    }
    return { action: 'answer', status: outcome.status, body: { error: outcome.code } };
  }

  return { client, check, decide };
}

/** A browser navigating: GET or HEAD, with HTML among what it accepts. */
function wantsPage(request: GuardRequest): boolean {
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    /text\/html/i.test(request.accept ?? '')
  );
}
