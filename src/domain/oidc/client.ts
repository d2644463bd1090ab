import { toIso } from '../../lib/clock.js';
import type { TokenFormat } from '../../lib/tokens.js';
import { clientSecretFormat } from './client-secret.js';
import { validationError } from '../errors.js';
import { isAcceptedText } from '../text.js';

export const TOKEN_ENDPOINT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'none',
] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

/** A relying party registered with `tessera oidc client create`. */
export interface OidcClientRecord {
  id: string;
  name: string;
  /**
   * SHA-256 of the client secret, behind `crc32:` when the secret carries a checksum
   * (client-secret.ts); null for a public client (PKCE, no secret).
   */
  secret_hash: string | null;
  /** How the client authenticates at the token endpoint (RFC 7591 2). */
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  /** JSON array of exact redirect URIs. */
  redirect_uris: string;
  /** JSON array of URIs RP-initiated logout may return to. */
  post_logout_redirect_uris: string;
  /** 1: the operator's own application, no consent page; 0: third party, asked once. */
  first_party: number;
  created_at: number;
  revoked_at: number | null;
}

export interface OidcClientView {
  client_id: string;
  name: string;
  type: 'public' | 'confidential';
  /** `crc32`: the secret carries a checksum; `legacy`: issued before; null: public client. */
  secret_format: TokenFormat | null;
  first_party: boolean;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  created_at: string;
  revoked_at: string | null;
}

export function toOidcClientView(record: OidcClientRecord): OidcClientView {
  return {
    client_id: record.id,
    name: record.name,
    type: record.secret_hash === null ? 'public' : 'confidential',
    secret_format: clientSecretFormat(record),
    first_party: record.first_party === 1,
    token_endpoint_auth_method: record.token_endpoint_auth_method,
    redirect_uris: JSON.parse(record.redirect_uris) as string[],
    post_logout_redirect_uris: JSON.parse(record.post_logout_redirect_uris) as string[],
    created_at: toIso(record.created_at),
    revoked_at: record.revoked_at === null ? null : toIso(record.revoked_at),
  };
}

export function requireClientName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > 128 || !isAcceptedText(name, 'line')) {
    throw validationError('name must be 1-128 characters on one line');
  }
  return name;
}

/**
 * Redirect URIs are compared exactly by the provider, so they are kept as given once they
 * parse: absolute http(s), no fragment (RFC 6749 3.1.2), no credentials, at most 2048
 * characters. Plain http is accepted for loopback and internal tools; docs/oidc.md says why
 * https is the rule everywhere else.
 */
export function requireRedirectUris(raw: readonly string[], field: string, min = 1): string[] {
  if (raw.length < min) throw validationError(`at least ${min} ${field} is required`);
  const uris = [...new Set(raw.map((uri) => uri.trim()))];
  for (const uri of uris) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      throw validationError(`${field} ${JSON.stringify(uri)} is not an absolute URL`);
    }
    if (
      (url.protocol !== 'https:' && url.protocol !== 'http:') ||
      url.hash !== '' ||
      uri.includes('#') ||
      url.username !== '' ||
      url.password !== '' ||
      uri.length > 2048 ||
      !isAcceptedText(uri, 'line')
    ) {
      throw validationError(
        `${field} ${JSON.stringify(uri)} must be an http(s) URL without fragment or credentials`,
      );
    }
  }
  return uris;
}
