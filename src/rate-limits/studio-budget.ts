/**
 * The studio's own budget (issue 50 point 9): its reads (and its free previews) are a person's
 * clicking and polling, not the integration's traffic, so they are counted here instead of against
 * the account's rate limit (docs/rate-limits.md "The studio").
 */
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js';

/**
 * Studio requests one account may make per minute, all its tabs and keys together. A jobs or batch
 * page polls every 2 s (30 a minute) while its work runs, and a person going through screens makes a
 * few dozen; the studio's browser tests, its busiest user, made 65 in their busiest minute on a 2-core
 * machine: room for a machine several times faster. No daily window: a studio left open on a long
 * batch must not run out. It is also the most a program claiming to be the studio gains, and only for
 * free requests (docs/rate-limits.md "The studio").
 */
export const STUDIO_REQUESTS_PER_MINUTE = 300;

/** Counts one studio request of `accountId` against the studio's budget. */
export function consumeStudioBudget(limiter: RateLimiter, accountId: string): Promise<RateLimitDecision> {
  return limiter.consumeCustom(`studio:${accountId}`, STUDIO_REQUESTS_PER_MINUTE);
}
