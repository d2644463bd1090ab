import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { GeneratedKey } from '../domain/oidc/signing-keys.js';

/**
 * RS256 with a 2048-bit RSA key: the one algorithm every OpenID Connect relying party must
 * accept (OpenID Connect Core 15.1), so Grafana, GitLab and the rest verify it unconfigured.
 */
export function generateSigningKey(): GeneratedKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = randomBytes(12).toString('base64url');
  const meta = { kid, alg: 'RS256', use: 'sig' };
  return {
    kid,
    alg: 'RS256',
    publicJwk: { ...publicKey.export({ format: 'jwk' }), ...meta },
    privateJwk: { ...privateKey.export({ format: 'jwk' }), ...meta },
  };
}
