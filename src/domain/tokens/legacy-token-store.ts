/**
 * The kinds that existed before checksums; a kind added since never had such tokens.
 * Per kind, what still keeps pre-checksum (`legacy`) tokens acceptable: sessions and
 * service tokens not revoked (sessions until the sweep deletes them, so an expired one
 * still answers `session_expired`), flows until the sweep deletes them.
 */
export type LegacyTokenKind = 'session' | 'service' | 'flow';

export type LegacyTokenCounts = Record<LegacyTokenKind, number>;

export interface LegacyTokenStore {
  /** Whether any such row remains, per kind: one indexed `LIMIT 1` probe each. */
  legacyTokensRemain(): Promise<Record<LegacyTokenKind, boolean>>;
  /** How many remain, per kind (the operator's view; counts every such row). */
  countLegacyTokens(): Promise<LegacyTokenCounts>;
}
