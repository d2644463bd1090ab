import type { Clock } from '../lib/clock.js';
import type { Store } from './store.js';

export interface SweepResult {
  sessions: number;
  flows: number;
  rate_limits: number;
  /** Passkey challenges never answered (those of swept flows and sessions go with them). */
  webauthn_challenges: number;
}

/** Deletes what can never be valid again: expired sessions (revoked ones included), flows, counters, challenges. */
export async function sweep(store: Store, clock: Clock): Promise<SweepResult> {
  const now = clock.now();
  return {
    sessions: await store.deleteExpiredSessions(now),
    flows: await store.deleteExpiredFlows(now),
    rate_limits: await store.deleteExpiredRateLimits(now),
    webauthn_challenges: await store.deleteExpiredWebAuthnChallenges(now),
  };
}
