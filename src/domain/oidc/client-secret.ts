import {
  type TokenFormat,
  hashToken,
  newToken,
  secretsEqual,
  tokenShape,
} from '../../lib/tokens.js';
import type { OidcClientRecord } from './client.js';

/**
 * A confidential client's secret has the shape of every other Tessera token (docs/tokens.md):
 * `tess_ocs_` and 43 characters carrying a CRC-32, so a secret scanner can verify a leaked
 * one offline. Only its SHA-256 is kept; a checksummed secret's digest is stored behind this
 * marker, so each client says by itself which shape its secret has and no migration was
 * needed. A secret issued before checksums (32 random bytes: the same shape, no checksum) is
 * stored as the bare digest and keeps working.
 */
const CHECKSUMMED = 'crc32:';

export function newClientSecret(): { secret: string; secretHash: string } {
  const secret = newToken('oidcClientSecret');
  return { secret, secretHash: CHECKSUMMED + hashToken(secret) };
}

/** The shape of a client's secret; null for a public client, which has none. */
export function clientSecretFormat(
  record: Pick<OidcClientRecord, 'secret_hash'>,
): TokenFormat | null {
  if (record.secret_hash === null) return null;
  return record.secret_hash.startsWith(CHECKSUMMED) ? 'crc32' : 'legacy';
}

/**
 * Constant-time check of a presented secret against the stored digest. The secret of a
 * client issued a checksummed one must pass the checksum: one that fails is a typo or a
 * guess, refused without hashing. A pre-checksum client's secret has no checksum to check.
 */
export function clientSecretMatches(
  record: Pick<OidcClientRecord, 'secret_hash'>,
  presented: unknown,
): boolean {
  const format = clientSecretFormat(record);
  const shape = tokenShape('oidcClientSecret', presented);
  if (format === null || shape === 'malformed') return false;
  if (format === 'crc32' && shape !== 'crc32') return false;
  const digest = record.secret_hash!.slice(format === 'crc32' ? CHECKSUMMED.length : 0);
  return secretsEqual(hashToken(presented as string), digest);
}
