import * as rp from 'openid-client';

/**
 * A relying party built with openid-client, as an application would use it: discovery,
 * PKCE, state, and ID tokens checked against the provider's JWKS (non-repudiation checks:
 * without them openid-client trusts an ID token fetched over TLS without its signature).
 */
export async function relyingParty(
  issuer: string,
  clientId: string,
  secret: string | null,
  options: { tokenHost?: string } = {},
): Promise<rp.Configuration> {
  const config = await rp.discovery(
    new URL(issuer),
    clientId,
    undefined,
    secret === null ? rp.None() : rp.ClientSecretBasic(secret),
    { execute: [rp.allowInsecureRequests] },
  );
  rp.enableNonRepudiationChecks(config);
  if (options.tokenHost) {
    // A load balancer sending the back-channel calls to another instance.
    const host = options.tokenHost;
    config[rp.customFetch] = (url, init) => {
      const target = new URL(url);
      target.host = host;
      return fetch(target, init as RequestInit);
    };
  }
  return config;
}

export interface Authorization {
  url: URL;
  verifier: string;
  state: string;
  nonce: string;
}

export async function startAuthorization(
  config: rp.Configuration,
  redirectUri: string,
  scope = 'openid profile offline_access',
  extra: Record<string, string> = {},
): Promise<Authorization> {
  const verifier = rp.randomPKCECodeVerifier();
  const state = rp.randomState();
  const nonce = rp.randomNonce();
  const url = rp.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await rp.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return { url, verifier, state, nonce };
}

export function redeem(config: rp.Configuration, auth: Authorization, landedOn: string) {
  return rp.authorizationCodeGrant(config, new URL(landedOn), {
    pkceCodeVerifier: auth.verifier,
    expectedState: auth.state,
    expectedNonce: auth.nonce,
    idTokenExpected: true,
  });
}

/** The JWS header of a compact JWT. */
export function jwtHeader(jwt: string): { kid?: string; alg?: string } {
  return JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString('utf8')) as {
    kid?: string;
    alg?: string;
  };
}
