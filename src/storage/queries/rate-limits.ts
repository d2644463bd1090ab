import { type Kysely, sql } from 'kysely';
import type { RateLimitStore } from '../../domain/rate-limit/rate-limit-store.js';
import type { Database } from '../schema.js';

/** One upsert: concurrent hits from any number of processes each see a distinct count. */
export function hitRateLimitQuery(
  db: Kysely<Database>,
  key: string,
  windowMs: number,
  now: number,
) {
  const windowOver = sql<boolean>`rate_limits.reset_at <= ${now}`;
  return db
    .insertInto('rate_limits')
    .values({ key, count: 1, reset_at: now + windowMs })
    .onConflict((conflict) =>
      conflict.column('key').doUpdateSet({
        count: sql<number>`CASE WHEN ${windowOver} THEN 1 ELSE rate_limits.count + 1 END`,
        reset_at: sql<number>`CASE WHEN ${windowOver} THEN ${now + windowMs} ELSE rate_limits.reset_at END`,
      }),
    )
    .returning(['count', 'reset_at']);
}

export function rateLimitQueries(db: Kysely<Database>): RateLimitStore {
  return {
    hitRateLimit(key, windowMs, now) {
      return hitRateLimitQuery(db, key, windowMs, now).executeTakeFirstOrThrow();
    },
    async hitRateLimits(counts, now) {
      const hits = [];
      for (const { key, windowMs, limit } of counts) {
        const hit = await hitRateLimitQuery(db, key, windowMs, now).executeTakeFirstOrThrow();
        hits.push(hit);
        if (hit.count > limit) break;
      }
      return hits;
    },
    async deleteExpiredRateLimits(now) {
      const result = await db
        .deleteFrom('rate_limits')
        .where('reset_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
