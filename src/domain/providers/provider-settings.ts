/** The kinds of entry the providers file accepts (docs/providers.md). */
export const PROVIDER_TYPES = ['oidc', 'google', 'microsoft', 'apple', 'gitlab', 'github'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** Apple signs its client secret itself: a JWT made from a private key (docs/providers.md). */
export interface AppleKey {
  teamId: string;
  keyId: string;
  /** The `.p8` key's PEM text, from the environment variable the entry names. */
  privateKey: string;
}

/**
 * One upstream provider, validated from `SERVICE_PROVIDERS_FILE`. Secrets are the values of
 * the environment variables the entry names, never the file's.
 */
export interface ProviderSettings {
  /** Lowercase; the link's `provider` and the callback's `/v1/providers/{id}/callback`. */
  id: string;
  type: ProviderType;
  /** The button's text: "Sign in with <label>". */
  label: string;
  clientId: string;
  /** Null for Apple (its secret is signed from `appleKey`) and for public clients. */
  clientSecret: string | null;
  scopes: readonly string[];
  /** OpenID Connect: the issuer discovered (`<issuer>/.well-known/openid-configuration`). */
  issuer: string | null;
  /** GitHub (Enterprise) and GitLab (self-hosted): where the server is. */
  baseUrl: string | null;
  appleKey: AppleKey | null;
  /**
   * Whether the provider's word that an address is verified is taken: only then is an
   * address copied to a new identity as verified.
   */
  trustEmail: boolean;
  /** Plain http is accepted only for a loopback host (local development, tests). */
  allowHttp: boolean;
}
