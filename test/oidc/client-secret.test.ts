import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  clientSecretFormat,
  clientSecretMatches,
  newClientSecret,
} from '../../src/domain/oidc/client-secret.js';
import type { OidcClientRecord } from '../../src/domain/oidc/client.js';
import { hashToken, tokenShape } from '../../src/lib/tokens.js';

const client = (secret_hash: string | null): OidcClientRecord => ({
  id: 'c1',
  name: 'App',
  secret_hash,
  token_endpoint_auth_method: 'client_secret_basic',
  redirect_uris: '[]',
  post_logout_redirect_uris: '[]',
  first_party: 0,
  created_at: 0,
  revoked_at: null,
});

/** One character changed mid-secret: the shape holds, the checksum fails. */
const typo = (secret: string) => {
  const at = 20;
  return secret.slice(0, at) + (secret[at] === 'Q' ? 'R' : 'Q') + secret.slice(at + 1);
};

/** OIDC client secrets in the checksummed token shape (docs/tokens.md), offline. */
describe('OIDC client secrets', () => {
  it('are minted checksummed, and the stored digest says so', () => {
    for (let i = 0; i < 200; i++) {
      const { secret, secretHash } = newClientSecret();
      expect(secret).toMatch(/^tess_ocs_[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/);
      expect(tokenShape('oidcClientSecret', secret)).toBe('crc32');
      expect(secretHash).toBe(`crc32:${hashToken(secret)}`);
      expect(clientSecretFormat(client(secretHash))).toBe('crc32');
      expect(clientSecretMatches(client(secretHash), secret)).toBe(true);
    }
  });

  it("refuse a checksummed client's secret whose checksum fails, before comparing digests", () => {
    const { secret, secretHash } = newClientSecret();
    const mistyped = typo(secret);
    expect(tokenShape('oidcClientSecret', mistyped)).toBe('unchecked');
    expect(clientSecretMatches(client(secretHash), mistyped)).toBe(false);
    // Even a stored digest of that very value would not let it through: the checksum decides.
    expect(clientSecretMatches(client(`crc32:${hashToken(mistyped)}`), mistyped)).toBe(false);
  });

  it('keep a pre-checksum secret (32 random bytes, a bare digest) working, and only it', () => {
    const old = `tess_ocs_${randomBytes(32).toString('base64url')}`;
    const record = client(hashToken(old));
    expect(clientSecretFormat(record)).toBe('legacy');
    expect(clientSecretMatches(record, old)).toBe(true);
    expect(clientSecretMatches(record, typo(old))).toBe(false);
    expect(clientSecretMatches(record, newClientSecret().secret)).toBe(false);
  });

  it('refuse what no client secret ever looked like, and public clients', () => {
    const { secret } = newClientSecret();
    for (const value of [
      `${secret}x`,
      secret.slice(0, -1),
      `${secret.slice(0, -1)}B`,
      secret.replace('tess_ocs_', 'tess_svc_'),
      '',
      undefined,
      42,
    ]) {
      // Not even a digest of the value itself lets it through.
      const digest = typeof value === 'string' ? hashToken(value) : 'x';
      expect(clientSecretMatches(client(digest), value)).toBe(false);
    }
    expect(clientSecretFormat(client(null))).toBeNull();
    expect(clientSecretMatches(client(null), secret)).toBe(false);
  });
});
