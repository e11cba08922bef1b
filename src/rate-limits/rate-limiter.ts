/**
 * Per-account rate limits (requests per minute and per day), by plan with per-account overrides.
 * Built on rate-limiter-flexible: in memory for one process, in Redis when several processes share the
 * load (`PRESSROOM_REDIS_URL`).
 *
 * Window behaviour (documented in docs/rate-limits.md): each window is fixed and starts at the account's
 * first request in it (not at clock boundaries); it resets `duration` later. As with any fixed window, a
 * client that spends its whole allowance at the end of one window can spend it again at the start of
 * the next, so up to 2× the per-minute limit can pass within any 60 s span; the per-day limit still caps
 * the total. When Redis is unreachable the limiter falls back to a per-process memory limiter (it
 * neither blocks every request nor lets everything through).
 */
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { Plan, RateLimitPolicy } from '../shared/config.js';

export interface RateLimitSubject {
  accountId: string;
  plan: Plan;
  rateLimitPerMinute: number | null;
  rateLimitPerDay: number | null;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** The limit of the window that binds (per minute when set). */
  limit: number;
  remaining: number;
  /** Unix time (seconds) when the binding window resets. */
  resetAt: number;
  /** Whole seconds to wait, when refused. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one request; null when the account has no limits at all. */
  consume(subject: RateLimitSubject, bucket?: string): Promise<RateLimitDecision | null>;
  /** What `consume` would report now, without counting a request (the headers of requests another budget pays for); null when no limits. */
  peek(subject: RateLimitSubject): Promise<RateLimitDecision | null>;
  /** Counts one request against an explicit limit (e.g. studio previews). */
  consumeCustom(key: string, perMinute: number): Promise<RateLimitDecision>;
  readonly backend: 'memory' | 'redis';
}

interface WindowResult {
  limit: number;
  allowed: boolean;
  remaining: number;
  msBeforeNext: number;
}

export function createRateLimiter(plans: Readonly<Record<Plan, RateLimitPolicy>>, redis?: Redis): RateLimiter {
  const limiters = new Map<string, RateLimiterAbstract>();

  function limiterFor(points: number, durationSeconds: number, bucket: string): RateLimiterAbstract {
    const name = `${bucket}:${durationSeconds}:${points}`;
    let limiter = limiters.get(name);
    if (!limiter) {
      const keyPrefix = `pressroom:rl:${name}`;
      const memory = new RateLimiterMemory({ points, duration: durationSeconds, keyPrefix });
      limiter = redis
        ? new RateLimiterRedis({
            storeClient: redis,
            points,
            duration: durationSeconds,
            keyPrefix,
            insuranceLimiter: memory,
            rejectIfRedisNotReady: true,
          })
        : memory;
      limiters.set(name, limiter);
    }
    return limiter;
  }

  async function consumeWindow(
    key: string,
    points: number,
    durationSeconds: number,
    bucket: string,
  ): Promise<WindowResult> {
    try {
      const res = await limiterFor(points, durationSeconds, bucket).consume(key, 1);
      return { limit: points, allowed: true, remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        return { limit: points, allowed: false, remaining: 0, msBeforeNext: rejection.msBeforeNext };
      }
      throw rejection;
    }
  }

  /** A window as it stands, not counting a request: a window not opened yet has all its points. */
  async function peekWindow(
    key: string,
    points: number,
    durationSeconds: number,
    bucket: string,
  ): Promise<WindowResult> {
    const res = await limiterFor(points, durationSeconds, bucket).get(key);
    if (!res) return { limit: points, allowed: true, remaining: points, msBeforeNext: durationSeconds * 1000 };
    return { limit: points, allowed: true, remaining: res.remainingPoints, msBeforeNext: res.msBeforeNext };
  }

  /** The account's windows (per minute, per day) that have a limit, each read with `read`. */
  function windowsOf(subject: RateLimitSubject, read: typeof consumeWindow, bucket: string): Promise<WindowResult>[] {
    const policy = plans[subject.plan];
    const perMinute = subject.rateLimitPerMinute ?? policy.perMinute;
    const perDay = subject.rateLimitPerDay ?? policy.perDay;
    const windows: Promise<WindowResult>[] = [];
    if (perMinute !== null) windows.push(read(subject.accountId, perMinute, 60, bucket));
    if (perDay !== null) windows.push(read(subject.accountId, perDay, 86_400, bucket));
    return windows;
  }

  function decide(windows: WindowResult[]): RateLimitDecision {
    const refused = windows.filter((w) => !w.allowed);
    // The binding window: a refusing one (the longest wait), else the one with the least left.
    const binding =
      refused.length > 0
        ? refused.reduce((a, b) => (b.msBeforeNext > a.msBeforeNext ? b : a))
        : windows.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    const now = Date.now();
    return {
      allowed: refused.length === 0,
      limit: windows[0]!.limit,
      remaining: Math.max(0, Math.min(...windows.map((w) => w.remaining))),
      resetAt: Math.ceil((now + binding.msBeforeNext) / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil(binding.msBeforeNext / 1000)),
    };
  }

  return {
    backend: redis ? 'redis' : 'memory',

    async consume(subject, bucket = 'api') {
      const checks = windowsOf(subject, consumeWindow, bucket);
      return checks.length === 0 ? null : decide(await Promise.all(checks));
    },

    async peek(subject) {
      const checks = windowsOf(subject, peekWindow, 'api');
      return checks.length === 0 ? null : decide(await Promise.all(checks));
    },

    async consumeCustom(key, perMinute) {
      return decide([await consumeWindow(key, perMinute, 60, 'custom')]);
    },
  };
}
