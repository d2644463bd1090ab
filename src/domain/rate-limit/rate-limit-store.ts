export interface RateLimitHit {
  count: number;
  reset_at: number;
}

/** One counter a request counts against, with the limit its rule allows. */
export interface RateLimitCount {
  key: string;
  windowMs: number;
  limit: number;
}

/**
 * Fixed-window counters kept in the database so every process sharing it sees the
 * same count. Each hit must be one atomic statement (upsert), never read-then-write.
 */
export interface RateLimitStore {
  hitRateLimit(key: string, windowMs: number, now: number): Promise<RateLimitHit>;
  /**
   * Hits the counters in order and stops after the first one past its limit: the same
   * counts as hitting them one by one and ending the request at the first refusal, in
   * one commit where the database allows (a sign-in counts its address and its username
   * together).
   */
  hitRateLimits(counts: readonly RateLimitCount[], now: number): Promise<RateLimitHit[]>;
  deleteExpiredRateLimits(now: number): Promise<number>;
}
