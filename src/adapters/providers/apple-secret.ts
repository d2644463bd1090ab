import { SignJWT, importPKCS8 } from 'jose';
import type { AppleKey } from '../../domain/providers/provider-settings.js';

/** Apple accepts client secrets valid up to six months; one per token request needs minutes. */
const LIFETIME_SECONDS = 300;

/**
 * Sign in with Apple's client secret: an ES256 JWT signed with the team's private key,
 * made afresh for each token request (developer.apple.com, "Creating a client secret").
 */
export async function appleClientSecret(
  key: AppleKey,
  clientId: string,
  now: number,
): Promise<string> {
  const privateKey = await importPKCS8(key.privateKey, 'ES256');
  const issuedAt = Math.floor(now / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: key.keyId })
    .setIssuer(key.teamId)
    .setSubject(clientId)
    .setAudience('https://appleid.apple.com')
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + LIFETIME_SECONDS)
    .sign(privateKey);
}
