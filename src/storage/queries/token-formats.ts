import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { LegacyTokenKind, LegacyTokenStore } from '../../domain/tokens/legacy-token-store.js';
import type { Database } from '../schema.js';

/**
 * Per token kind, the rows that keep pre-checksum tokens acceptable. Plain SQL with the
 * conditions as literals, not parameters: both databases use a partial index (migration
 * 0007_token_format) only when the query's WHERE visibly implies the index's.
 */
const LEGACY_ROWS: Record<LegacyTokenKind, RawBuilder<unknown>> = {
  session: sql`sessions WHERE token_format = 'legacy' AND revoked_at IS NULL`,
  service: sql`service_tokens WHERE token_format = 'legacy' AND revoked_at IS NULL`,
  flow: sql`flows WHERE token_format = 'legacy'`,
};

export function tokenFormatQueries(db: Kysely<Database>): LegacyTokenStore {
  const perKind = async <T>(
    query: (rows: RawBuilder<unknown>) => Promise<T>,
  ): Promise<Record<LegacyTokenKind, T>> => ({
    session: await query(LEGACY_ROWS.session),
    service: await query(LEGACY_ROWS.service),
    flow: await query(LEGACY_ROWS.flow),
  });
  return {
    legacyTokensRemain() {
      return perKind(
        async (rows) => (await sql`SELECT 1 FROM ${rows} LIMIT 1`.execute(db)).rows.length > 0,
      );
    },
    countLegacyTokens() {
      return perKind(async (rows) => {
        const result = await sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM ${rows}`.execute(
          db,
        );
        return Number(result.rows[0]!.n);
      });
    },
  };
}
