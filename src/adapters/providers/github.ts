import * as oidc from 'openid-client';
import type { ProviderSettings } from '../../domain/providers/provider-settings.js';
import {
  type AuthorizationRequest,
  type AuthorizationResponse,
  type DiscoveryState,
  type UpstreamAccount,
  type UpstreamProvider,
  UpstreamFailure,
} from '../../domain/providers/upstream.js';
import { requestOptions, skewSeconds, upstreamFailure } from './failures.js';

interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
}

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/** github.com's API lives on its own host; Enterprise Server's under `/api/v3`. */
function apiBase(baseUrl: string): string {
  return baseUrl === 'https://github.com' ? 'https://api.github.com' : `${baseUrl}/api/v3`;
}

function isUser(value: unknown): value is GitHubUser {
  const user = value as Partial<GitHubUser> | null;
  return (
    typeof user === 'object' &&
    user !== null &&
    Number.isSafeInteger(user.id) &&
    typeof user.login === 'string'
  );
}

function isEmailList(value: unknown): value is GitHubEmail[] {
  return (
    Array.isArray(value) &&
    value.every(
      (entry: Partial<GitHubEmail>) =>
        typeof entry?.email === 'string' && typeof entry.verified === 'boolean',
    )
  );
}

/**
 * GitHub (and GitHub Enterprise Server at `base_url`): OAuth 2 without OpenID Connect, so
 * no ID token. The code is redeemed with openid-client (state and PKCE checked), and the
 * account is what GitHub's API answers with that access token: `GET /user` (the numeric
 * `id` is the subject: a login can be renamed and reused) and `GET /user/emails`, of which
 * only a verified address is taken, the primary one first.
 */
export function gitHubProvider(settings: ProviderSettings): UpstreamProvider {
  const base = settings.baseUrl!;
  const api = apiBase(base);
  const options = requestOptions(settings.allowHttp);
  const server: oidc.ServerMetadata = {
    issuer: base,
    authorization_endpoint: `${base}/login/oauth/authorize`,
    token_endpoint: `${base}/login/oauth/access_token`,
  };

  function configuration(now: number): oidc.Configuration {
    const config = new oidc.Configuration(
      server,
      settings.clientId,
      { [oidc.clockSkew]: skewSeconds(now) },
      oidc.ClientSecretPost(settings.clientSecret ?? undefined),
    );
    for (const apply of options.execute) apply(config);
    return config;
  }

  async function get(config: oidc.Configuration, token: string, path: string): Promise<unknown> {
    const headers = new Headers({
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    });
    const response = await oidc.fetchProtectedResource(
      config,
      token,
      new URL(`${api}${path}`),
      'GET',
      null,
      headers,
    );
    if (!response.ok)
      throw new UpstreamFailure('invalid_response', `GET ${path} answered ${response.status}`);
    return response.json();
  }

  return {
    id: settings.id,
    type: settings.type,
    label: settings.label,
    trustEmail: settings.trustEmail,
    responseMode: 'query',

    async authorizationUrl(request: AuthorizationRequest): Promise<string> {
      const url = oidc.buildAuthorizationUrl(configuration(Date.now()), {
        redirect_uri: request.redirectUri,
        scope: settings.scopes.join(' '),
        state: request.state,
        code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
        code_challenge_method: 'S256',
        // Only accounts that may sign up (GitHub's own setting, on by default).
        allow_signup: 'true',
      });
      return url.href;
    },

    async redeem(
      request: AuthorizationRequest,
      response: AuthorizationResponse,
    ): Promise<UpstreamAccount> {
      try {
        const config = configuration(response.now);
        const callback = new URL(request.redirectUri);
        for (const [name, value] of Object.entries(response.params)) {
          callback.searchParams.set(name, value);
        }
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: request.codeVerifier,
          expectedState: request.state,
          idTokenExpected: false,
        });
        const user = await get(config, tokens.access_token, '/user');
        if (!isUser(user))
          throw new UpstreamFailure('invalid_response', 'GET /user: no id and login');
        const emails = await get(config, tokens.access_token, '/user/emails');
        if (!isEmailList(emails))
          throw new UpstreamFailure('invalid_response', 'GET /user/emails: not a list');
        const verified = emails.filter((entry) => entry.verified);
        const chosen = verified.find((entry) => entry.primary) ?? verified[0];
        return {
          subject: String(user.id),
          email: chosen ? chosen.email.toLowerCase() : null,
          emailVerified: chosen !== undefined,
          preferredUsername: user.login,
          name: typeof user.name === 'string' && user.name.trim() !== '' ? user.name.trim() : null,
        };
      } catch (error) {
        throw upstreamFailure(error);
      }
    },

    // Nothing to discover: the endpoints are GitHub's documented ones.
    discover(): Promise<DiscoveryState> {
      return Promise.resolve({
        state: 'ok',
        issuer: null,
        authorizationEndpoint: server.authorization_endpoint!,
      });
    },
  };
}
