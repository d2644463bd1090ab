import type { OutboxKind } from './outbox.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * The one retry schedule of every outbox kind: the wait after the 1st, 2nd, ... failed
 * attempt, the last one repeating. 5 s then 30 s answers both "mail is first retried
 * within 30 seconds" and "a webhook after about 5 s, 30 s"; then the waits grow, so a long
 * outage costs a few attempts an hour, not thousands.
 */
export const RETRY_DELAYS_MS = [
  5 * SECOND,
  30 * SECOND,
  1 * MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  20 * MINUTE,
  30 * MINUTE,
  1 * HOUR,
] as const;

/**
 * How long after it was queued a row may still be retried; past it, a temporary failure
 * becomes `failed`. A mail's codes are stale long before this, but a mail still tells the
 * user something happened; webhooks promise 24 h.
 */
export const MAX_AGE_MS: Record<OutboxKind, number> = {
  mail: 12 * HOUR,
  webhook: 24 * HOUR,
};

/**
 * When to try again after a temporary failure of attempt number `attempts` (1 for the
 * first), or null: give up. `createdAt` and `now` are epoch ms.
 */
export function nextAttemptAt(
  kind: OutboxKind,
  attempts: number,
  createdAt: number,
  now: number,
): number | null {
  const index = Math.min(Math.max(attempts, 1), RETRY_DELAYS_MS.length) - 1;
  const at = now + RETRY_DELAYS_MS[index]!;
  return at - createdAt > MAX_AGE_MS[kind] ? null : at;
}
