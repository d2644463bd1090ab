import type { TokenKind } from '../../lib/tokens.js';

/**
 * Per token kind, what still keeps pre-checksum (`legacy`) tokens acceptable: sessions and
 * service tokens not revoked (sessions until the sweep deletes them, so an expired one
 * still answers `session_expired`), flows until the sweep deletes them.
 */
export type LegacyTokenCounts = Record<TokenKind, number>;

export interface LegacyTokenStore {
  /** Whether any such row remains, per kind: one indexed `LIMIT 1` probe each. */
  legacyTokensRemain(): Promise<Record<TokenKind, boolean>>;
  /** How many remain, per kind (the operator's view; counts every such row). */
  countLegacyTokens(): Promise<LegacyTokenCounts>;
}
