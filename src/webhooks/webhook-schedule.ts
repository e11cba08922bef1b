/**
 * When a failed webhook delivery is tried again. After failed attempt n (1-based) the next one waits
 *
 *     base · 2^(n−1)  +  uniform[0, base · 2^(n−1))
 *
 * an exponential floor plus full jitter of the same size. The floor makes the schedule provable: with
 * the defaults (base 30 s, 8 attempts) the 7 gaps add up to at least 30 s · (2^7 − 1) = 63.5 min and
 * at most 127 min, so a receiver that is down for an hour still gets its notification
 * (webhook-schedule.test.ts checks the arithmetic). The jitter spreads a burst of retries after an
 * outage instead of sending them all at the same second.
 */

/** First retry delay, doubled per attempt with jitter: a receiver down for a deploy is tried again after it. */
export const WEBHOOK_BASE_DELAY_MS = 30_000;

/** One attempt's deadline: a receiver should answer at once and do its work afterwards. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * Attempts of one account in flight at once, every process together, so a receiver that never
 * answers delays only its own account's webhooks.
 */
export const WEBHOOK_ACCOUNT_CONCURRENCY = 4;

/** Longest single wait, so a large `PRESSROOM_WEBHOOK_MAX_ATTEMPTS` cannot schedule into next year. */
export const MAX_DELIVERY_DELAY_MS = 24 * 3600 * 1000;

/** Delay before the attempt that follows failed attempt `attempt` (1-based). */
export function deliveryRetryDelayMs(attempt: number, baseDelayMs: number, random: () => number = Math.random): number {
  const floor = Math.min(baseDelayMs * 2 ** Math.max(0, attempt - 1), MAX_DELIVERY_DELAY_MS);
  return Math.min(Math.floor(floor + random() * floor), 2 * MAX_DELIVERY_DELAY_MS);
}

/** The shortest and longest time between the first and the last attempt, for docs and tests. */
export function deliverySpanMs(maxAttempts: number, baseDelayMs: number): { min: number; max: number } {
  let min = 0;
  let max = 0;
  for (let attempt = 1; attempt < maxAttempts; attempt++) {
    min += deliveryRetryDelayMs(attempt, baseDelayMs, () => 0);
    max += deliveryRetryDelayMs(attempt, baseDelayMs, () => 1);
  }
  return { min, max };
}
