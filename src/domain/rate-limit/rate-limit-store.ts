export interface RateLimitHit {
  count: number;
  reset_at: number;
}

/**
 * Fixed-window counters kept in the database so every process sharing it sees the
 * same count. `hitRateLimit` must be one atomic statement (upsert), never read-then-write.
 */
export interface RateLimitStore {
  hitRateLimit(key: string, windowMs: number, now: number): Promise<RateLimitHit>;
  deleteExpiredRateLimits(now: number): Promise<number>;
}
