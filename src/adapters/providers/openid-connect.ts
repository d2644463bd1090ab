import * as oidc from 'openid-client';
import type { ProviderSettings } from '../../domain/providers/provider-settings.js';
import type {
  AuthorizationRequest,
  AuthorizationResponse,
  DiscoveryState,
  UpstreamAccount,
  UpstreamProvider,
} from '../../domain/providers/upstream.js';
import { appleClientSecret } from './apple-secret.js';
import { requestOptions, skewSeconds, upstreamFailure } from './failures.js';

type Claims = Record<string, unknown>;

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** Apple has sent `email_verified` as the string "true". */
function isTrue(value: unknown): boolean {
  return value === true || value === 'true';
}

export function accountOf(claims: Claims): UpstreamAccount {
  const email = text(claims.email);
  return {
    subject: String(claims.sub),
    email: email?.toLowerCase() ?? null,
    emailVerified: email !== null && isTrue(claims.email_verified),
    preferredUsername: text(claims.preferred_username) ?? text(claims.nickname),
    name: text(claims.name),
  };
}

/**
 * A provider speaking OpenID Connect, found by discovery (`<issuer>/.well-known/openid-configuration`)
 * with openid-client: the generic `oidc` entry and the Google, Microsoft, Apple and GitLab
 * presets, which differ only in their issuer (provider-settings) and Apple's signed client
 * secret and form_post response. Discovery happens on first use and is tried again after a
 * failure, so a provider that is down at start-up does not stop Tessera.
 *
 * ID tokens are checked against the provider's published keys (non-repudiation checks on:
 * without them openid-client would rely on TLS alone), and against the issuer, the client
 * id as audience, their expiry by the domain's clock, and the nonce.
 */
export function openIdConnectProvider(settings: ProviderSettings): UpstreamProvider {
  const options = requestOptions(settings.allowHttp);
  const formPost = settings.type === 'apple';
  let discovered: Promise<oidc.Configuration> | undefined;
  let keys: oidc.ExportedJWKSCache | undefined;

  function discover(): Promise<oidc.Configuration> {
    discovered ??= oidc
      .discovery(new URL(settings.issuer!), settings.clientId, undefined, undefined, options)
      .catch((error: unknown) => {
        discovered = undefined;
        throw upstreamFailure(error);
      });
    return discovered;
  }

  async function clientAuth(server: oidc.ServerMetadata, now: number): Promise<oidc.ClientAuth> {
    if (settings.appleKey) {
      return oidc.ClientSecretPost(
        await appleClientSecret(settings.appleKey, settings.clientId, now),
      );
    }
    if (settings.clientSecret === null) return oidc.None();
    // client_secret_basic is OAuth's default for a registered client (RFC 7591); post only
    // where the provider does not offer basic.
    const methods = server.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    return methods.includes('client_secret_basic')
      ? oidc.ClientSecretBasic(settings.clientSecret)
      : oidc.ClientSecretPost(settings.clientSecret);
  }

  return {
    id: settings.id,
    type: settings.type,
    label: settings.label,
    trustEmail: settings.trustEmail,
    responseMode: formPost ? 'form_post' : 'query',

    async authorizationUrl(request: AuthorizationRequest): Promise<string> {
      const config = await discover();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: request.redirectUri,
        scope: settings.scopes.join(' '),
        state: request.state,
        nonce: request.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
        code_challenge_method: 'S256',
        ...(formPost ? { response_mode: 'form_post' } : {}),
      });
      return url.href;
    },

    async redeem(
      request: AuthorizationRequest,
      response: AuthorizationResponse,
    ): Promise<UpstreamAccount> {
      try {
        const server = (await discover()).serverMetadata();
        const config = new oidc.Configuration(
          server,
          settings.clientId,
          { [oidc.clockSkew]: skewSeconds(response.now) },
          await clientAuth(server, response.now),
        );
        for (const apply of options.execute) apply(config);
        oidc.enableNonRepudiationChecks(config);
        if (keys) oidc.setJwksCache(config, keys);
        const callback = new URL(request.redirectUri);
        for (const [name, value] of Object.entries(response.params)) {
          callback.searchParams.set(name, value);
        }
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: request.codeVerifier,
          expectedState: request.state,
          expectedNonce: request.nonce,
          idTokenExpected: true,
        });
        keys = oidc.getJwksCache(config) ?? keys;
        const claims: Claims = { ...tokens.claims() };
        if (server.userinfo_endpoint && tokens.access_token) {
          // Providers put the profile and email claims in the ID token or only at userinfo
          // (OpenID Connect Core 5.4); userinfo's `sub` must match the ID token's.
          const info = await oidc.fetchUserInfo(config, tokens.access_token, String(claims.sub));
          Object.assign(claims, { ...info, sub: claims.sub });
        }
        return accountOf(claims);
      } catch (error) {
        throw upstreamFailure(error);
      }
    },

    async discover(): Promise<DiscoveryState> {
      try {
        const server = (await discover()).serverMetadata();
        return {
          state: 'ok',
          issuer: server.issuer,
          authorizationEndpoint: server.authorization_endpoint ?? '',
        };
      } catch (error) {
        return { state: 'failed', error: upstreamFailure(error).detail };
      }
    },
  };
}
