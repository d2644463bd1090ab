import { tokenShape } from '../../lib/tokens.js';
import type { LegacyTokenKind, LegacyTokenStore } from './legacy-token-store.js';

/**
 * Whether tokens minted before checksums (docs/tokens.md) may still be presented, per kind.
 * A token whose checksum fails is a typo, a made-up string or such a token: while the
 * database still holds live pre-checksum tokens of its kind it is looked up like any
 * other; once none remain it is refused offline, before hashing or any lookup, with the
 * answer an unknown token gets.
 *
 * Until the first `refresh` every kind counts as possibly present, so a process that has
 * not looked yet (or whose look failed) answers exactly as before checksums existed.
 * The server refreshes at start-up and after each sweep; the answer can only go from
 * "remain" to "none" by revocations and the sweep, or back when a process of an older
 * version, during a rolling upgrade, mints one (its rows carry the column's default).
 * OIDC client secrets are not among these kinds: their client is at hand when one is
 * presented, and its stored digest says which shape its secret has (oidc/client-secret.ts).
 */
export class LegacyTokens {
  private remain: Readonly<Record<LegacyTokenKind, boolean>> | null = null;

  /** Per kind, whether pre-checksum tokens may still be presented (null: not looked yet). */
  snapshot(): Readonly<Record<LegacyTokenKind, boolean>> | null {
    return this.remain;
  }

  async refresh(store: Pick<LegacyTokenStore, 'legacyTokensRemain'>): Promise<void> {
    this.remain = await store.legacyTokensRemain();
  }

  /**
   * The offline check in front of every lookup by token: a checksummed token of `kind`, or
   * a well-formed one while pre-checksum tokens of that kind may exist.
   */
  accepts(kind: LegacyTokenKind, value: unknown): value is string {
    const shape = tokenShape(kind, value);
    if (shape !== 'unchecked') return shape === 'crc32';
    return this.remain === null || this.remain[kind] === true;
  }
}
