import type { Clock } from '../../lib/clock.js';
import type { RateLimitRule } from '../../lib/rate.js';
import { DomainError } from '../errors.js';
import type { RateLimitHit, RateLimitStore } from './rate-limit-store.js';

/** Counts one attempt under `key`; past the rule's limit, refuses with `retry_after`. */
export async function consumeRateLimit(
  store: Pick<RateLimitStore, 'hitRateLimit'>,
  clock: Clock,
  key: string,
  rule: RateLimitRule,
): Promise<void> {
  const now = clock.now();
  refuseOver(await store.hitRateLimit(key, rule.windowMs, now), rule, now);
}

/** A counter and the rule it is counted under. */
export interface RateLimited {
  key: string;
  rule: RateLimitRule;
}

/**
 * Counts one attempt under each key, in order, in one write; the first past its rule's
 * limit refuses, and the keys after it are not counted.
 */
export async function consumeRateLimits(
  store: Pick<RateLimitStore, 'hitRateLimits'>,
  clock: Clock,
  limits: readonly RateLimited[],
): Promise<void> {
  if (limits.length === 0) return;
  const now = clock.now();
  const hits = await store.hitRateLimits(
    limits.map(({ key, rule }) => ({ key, windowMs: rule.windowMs, limit: rule.limit })),
    now,
  );
  hits.forEach((hit, i) => refuseOver(hit, limits[i]!.rule, now));
}

function refuseOver(hit: RateLimitHit, rule: RateLimitRule, now: number): void {
  if (hit.count > rule.limit) {
    const retryAfter = Math.max(1, Math.ceil((hit.reset_at - now) / 1000));
    throw new DomainError('rate_limited', 'too many attempts', { retryAfterSeconds: retryAfter });
  }
}
