import { hashToken, randomSecret } from '../../lib/tokens.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Clock } from '../../lib/clock.js';
import { notFound } from '../errors.js';
import type { Store } from '../store.js';
import type { ProviderAuthorizationRecord } from './authorization.js';
import { ProviderRefusal } from './refusal.js';
import type { AuthorizationRequest, UpstreamProvider, UpstreamProviders } from './upstream.js';

export interface AuthorizeDeps {
  store: Pick<Store, 'insertProviderAuthorization' | 'takeProviderAuthorization'>;
  clock: Clock;
  providers: UpstreamProviders;
  secretBox: Pick<SecretBox, 'seal' | 'open'>;
}

/** The callback's path: the redirect URI to register with each provider. */
export function callbackPath(providerId: string): string {
  return `/v1/providers/${providerId}/callback`;
}

export function providerById(deps: Pick<AuthorizeDeps, 'providers'>, id: string): UpstreamProvider {
  const provider = deps.providers.get(id);
  if (!provider) throw notFound();
  return provider;
}

const sealContext = (stateHash: string) => `provider-authorization:${stateHash}`;

export interface NewAuthorization {
  provider: UpstreamProvider;
  purpose: ProviderAuthorizationRecord['purpose'];
  flowId: string | null;
  identityId: string | null;
  /** The browser's binding cookie value (docs/providers.md). */
  browser: string;
  /** The service's origin browsers use: SERVICE_PUBLIC_URL's, else the request's. */
  origin: string;
  /** The request lives as long as what it serves (the login flow): then the sweep takes it. */
  expiresAt: number;
}

/**
 * Starts an authorization request: a fresh `state`, `nonce` and PKCE verifier (32 random
 * bytes each), the request kept in the database bound to the browser, and the provider's
 * URL to send the browser to. The URL is built first: a provider whose discovery fails
 * leaves no row.
 */
export async function authorize(deps: AuthorizeDeps, input: NewAuthorization): Promise<string> {
  const request: AuthorizationRequest = {
    redirectUri: `${input.origin}${callbackPath(input.provider.id)}`,
    state: randomSecret(),
    nonce: randomSecret(),
    codeVerifier: randomSecret(),
  };
  const url = await input.provider.authorizationUrl(request);
  const stateHash = hashToken(request.state);
  const secrets = JSON.stringify({ verifier: request.codeVerifier, nonce: request.nonce });
  await deps.store.insertProviderAuthorization({
    state_hash: stateHash,
    provider_id: input.provider.id,
    purpose: input.purpose,
    flow_id: input.flowId,
    identity_id: input.identityId,
    browser_hash: hashToken(input.browser),
    redirect_uri: request.redirectUri,
    sealed: deps.secretBox.seal(secrets, sealContext(stateHash)),
    created_at: deps.clock.now(),
    expires_at: input.expiresAt,
  });
  return url;
}

/** An authorization request taken by its callback: the record and what redeeming needs. */
export interface TakenAuthorization {
  record: ProviderAuthorizationRecord;
  provider: UpstreamProvider;
  request: AuthorizationRequest;
}

/**
 * The callback's first step: the request its `state` names, started in this browser (its
 * binding cookie), for this provider, not expired, taken in one conditional DELETE so a
 * replay (or a race of two callbacks) finds nothing. Anything else is `state_invalid`, and
 * a foreign browser's callback leaves the real request to its own browser.
 */
export async function takeAuthorization(
  deps: AuthorizeDeps,
  input: { providerId: string; state: unknown; browser: unknown },
): Promise<TakenAuthorization> {
  const provider = providerById(deps, input.providerId);
  const { state, browser } = input;
  if (typeof state !== 'string' || state === '' || typeof browser !== 'string' || browser === '') {
    throw new ProviderRefusal('state_invalid');
  }
  const stateHash = hashToken(state);
  const record = await deps.store.takeProviderAuthorization(
    stateHash,
    hashToken(browser),
    deps.clock.now(),
  );
  if (!record || record.provider_id !== provider.id) throw new ProviderRefusal('state_invalid');
  const opened = deps.secretBox.open(record.sealed, sealContext(stateHash));
  if (opened === null) throw new ProviderRefusal('state_invalid');
  const { verifier, nonce } = JSON.parse(opened) as { verifier: string; nonce: string };
  return {
    record,
    provider,
    request: { redirectUri: record.redirect_uri, state, nonce, codeVerifier: verifier },
  };
}
