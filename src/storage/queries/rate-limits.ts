import { type Kysely, sql } from 'kysely';
import type {
  RateLimitCount,
  RateLimitHit,
  RateLimitStore,
} from '../../domain/rate-limit/rate-limit-store.js';
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

/** `hitRateLimits` on top of one counter's upsert: in order, stopping after the first past its limit. */
export async function hitInOrder(
  counts: readonly RateLimitCount[],
  hit: (count: RateLimitCount) => Promise<RateLimitHit>,
): Promise<RateLimitHit[]> {
  const hits: RateLimitHit[] = [];
  for (const count of counts) {
    const counted = await hit(count);
    hits.push(counted);
    if (counted.count > count.limit) break;
  }
  return hits;
}

export function rateLimitQueries(db: Kysely<Database>): RateLimitStore {
  return {
    hitRateLimit(key, windowMs, now) {
      return hitRateLimitQuery(db, key, windowMs, now).executeTakeFirstOrThrow();
    },
    hitRateLimits(counts, now) {
      return hitInOrder(counts, ({ key, windowMs }) =>
        hitRateLimitQuery(db, key, windowMs, now).executeTakeFirstOrThrow(),
      );
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
