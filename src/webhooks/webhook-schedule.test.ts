import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import { deliveryRetryDelayMs, deliverySpanMs } from './webhook-schedule.js';
import { jobRetryDelayMs } from '../jobs/job-retry-policy.js';

describe('webhook retry schedule', () => {
  const defaults = loadConfig({
    PRESSROOM_SECRET_KEY: 'x'.repeat(32),
    PRESSROOM_DATA_DIR: '/tmp/pressroom-schedule-test',
  }).webhooks;

  it('has the documented defaults: 10 s timeout, 8 attempts, 30 s base, 4 deliveries in flight per account', () => {
    expect(defaults).toEqual({ timeoutMs: 10_000, maxAttempts: 8, baseDelayMs: 30_000, accountConcurrency: 4 });
  });

  it('makes at least 5 attempts spread over at least an hour by default, whatever the jitter', () => {
    expect(defaults.maxAttempts).toBeGreaterThanOrEqual(5);
    const span = deliverySpanMs(defaults.maxAttempts, defaults.baseDelayMs);
    // 7 gaps, floors 30 s · (1 + 2 + … + 64) = 30 s · 127 = 3810 s; jitter adds up to as much again.
    expect(span.min).toBe(30_000 * 127);
    expect(span.min).toBeGreaterThanOrEqual(3600_000);
    expect(span.max).toBe(2 * 30_000 * 127);
  });

  it('doubles the floor and adds up to one floor of jitter', () => {
    const base = 30_000;
    for (let attempt = 1; attempt <= 7; attempt++) {
      const floor = base * 2 ** (attempt - 1);
      expect(deliveryRetryDelayMs(attempt, base, () => 0)).toBe(floor);
      expect(deliveryRetryDelayMs(attempt, base, () => 0.5)).toBe(1.5 * floor);
      expect(deliveryRetryDelayMs(attempt, base, () => 0.999999)).toBeLessThan(2 * floor);
    }
  });

  it('spreads retries of deliveries that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => deliveryRetryDelayMs(3, 30_000)));
    expect(delays.size).toBeGreaterThan(40);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(120_000);
  });

  it('caps a single wait at a day even with many attempts', () => {
    expect(deliveryRetryDelayMs(40, 30_000, () => 0)).toBe(24 * 3600_000);
  });
});

describe('job retry backoff', () => {
  it('doubles from the base with equal jitter, capped at 10 minutes', () => {
    expect(jobRetryDelayMs(1, 2000, () => 0)).toBe(1000);
    expect(jobRetryDelayMs(1, 2000, () => 1)).toBe(2000);
    expect(jobRetryDelayMs(3, 2000, () => 0)).toBe(4000);
    expect(jobRetryDelayMs(3, 2000, () => 1)).toBe(8000);
    expect(jobRetryDelayMs(30, 2000, () => 1)).toBe(600_000);
  });
});
