import { describe, expect, it } from 'vitest';
import {
  MAX_AGE_MS,
  nextAttemptAt,
  RETRY_DELAYS_MS,
} from '../../src/domain/outbox/retry-policy.js';

const T0 = Date.parse('2026-11-26T10:00:00.000Z');

describe('the outbox retry policy', () => {
  it('retries after 5 s, then 30 s, then waits that grow and level off at an hour', () => {
    const waits = [1, 2, 3, 4, 5, 9, 10, 50].map(
      (attempt) => nextAttemptAt('mail', attempt, T0, T0)! - T0,
    );
    expect(waits.slice(0, 2)).toEqual([5_000, 30_000]);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1]!);
    expect(waits.at(-1)).toBe(3_600_000);
    expect(RETRY_DELAYS_MS.at(-1)).toBe(3_600_000);
  });

  it('gives up once the next try would fall past the kind’s maximum age', () => {
    expect(MAX_AGE_MS).toEqual({ mail: 12 * 3_600_000, webhook: 24 * 3_600_000 });
    const lateMail = T0 + MAX_AGE_MS.mail - 1000;
    expect(nextAttemptAt('mail', 20, T0, lateMail)).toBeNull();
    // The same moment is well within a webhook's day.
    expect(nextAttemptAt('webhook', 20, T0, lateMail)).toBe(lateMail + 3_600_000);
  });
});
