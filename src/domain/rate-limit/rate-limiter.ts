import type { Clock } from '../../lib/clock.js';
import type { RateLimitRule } from '../../lib/rate.js';
import { DomainError } from '../errors.js';
import type { RateLimitStore } from './rate-limit-store.js';

/** Counts one attempt under `key`; past the rule's limit, refuses with `retry_after`. */
export async function consumeRateLimit(
  store: Pick<RateLimitStore, 'hitRateLimit'>,
  clock: Clock,
  key: string,
  rule: RateLimitRule,
): Promise<void> {
  const now = clock.now();
  const hit = await store.hitRateLimit(key, rule.windowMs, now);
  if (hit.count > rule.limit) {
    const retryAfter = Math.max(1, Math.ceil((hit.reset_at - now) / 1000));
    throw new DomainError('rate_limited', 'too many attempts', retryAfter);
  }
}
