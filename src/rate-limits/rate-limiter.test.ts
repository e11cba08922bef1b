import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createRateLimiter, type RateLimitSubject } from './rate-limiter.js';
import { randomId } from '../shared/ids.js';

const PLANS = {
  free: { perMinute: 3, perDay: 5 },
  pro: { perMinute: 10, perDay: null },
  enterprise: { perMinute: null, perDay: null },
} as const;

const subject = (plan: RateLimitSubject['plan'], overrides: Partial<RateLimitSubject> = {}): RateLimitSubject => ({
  accountId: `acc_${randomId(10)}`,
  plan,
  rateLimitPerMinute: null,
  rateLimitPerDay: null,
  ...overrides,
});

const redisClients: Redis[] = [];
const newRedis = () => {
  const client = new Redis('redis://127.0.0.1:6379', { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redisClients.push(client);
  return client;
};
afterAll(() => redisClients.forEach((c) => c.disconnect()));

async function waitReady(client: Redis) {
  if (client.status === 'ready') return;
  await new Promise((resolve) => client.once('ready', resolve));
}

describe.each(['memory', 'redis'] as const)('rate limiter (%s)', (backend) => {
  const make = async () => {
    if (backend === 'memory') return createRateLimiter(PLANS);
    const client = newRedis();
    await waitReady(client);
    return createRateLimiter(PLANS, client);
  };

  it('allows the plan limit per minute, then refuses with a retry time', async () => {
    const limiter = await make();
    const who = subject('free');
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(who));
    expect(decisions.map((d) => d!.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d!.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions[0]!.limit).toBe(3);
    const last = decisions[3]!;
    expect(last.retryAfterSeconds).toBeGreaterThan(0);
    expect(last.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(last.resetAt).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('applies the per-day limit too, and per-account overrides', async () => {
    const limiter = await make();
    const who = subject('free', { rateLimitPerMinute: 100 });
    const allowed = [];
    for (let i = 0; i < 7; i++) allowed.push((await limiter.consume(who))!.allowed);
    expect(allowed).toEqual([true, true, true, true, true, false, false]);
  });

  it('peeks at the windows without counting a request (the studio’s requests, issue 50 point 9)', async () => {
    const limiter = await make();
    const who = subject('free');
    expect(await limiter.peek(who)).toMatchObject({ allowed: true, limit: 3, remaining: 3 });
    await limiter.consume(who);
    for (let i = 0; i < 5; i++) expect((await limiter.peek(who))!.remaining).toBe(2);
    expect((await limiter.consume(who))!.remaining).toBe(1);
    await limiter.consume(who);
    expect(await limiter.peek(who)).toMatchObject({ remaining: 0, limit: 3 });
    expect((await limiter.consume(who))!.allowed).toBe(false);
    expect(await limiter.peek(subject('enterprise'))).toBeNull();
  });

  it('keeps accounts apart and gives unlimited plans no limit', async () => {
    const limiter = await make();
    const a = subject('free');
    const b = subject('free');
    for (let i = 0; i < 3; i++) await limiter.consume(a);
    expect((await limiter.consume(a))!.allowed).toBe(false);
    expect((await limiter.consume(b))!.allowed).toBe(true);
    expect(await limiter.consume(subject('enterprise'))).toBeNull();
  });
});

describe('rate limiter shared through Redis', () => {
  it('is exact across processes: two limiters on one Redis share one count', async () => {
    const [c1, c2] = [newRedis(), newRedis()];
    await Promise.all([waitReady(c1), waitReady(c2)]);
    const first = createRateLimiter(PLANS, c1);
    const second = createRateLimiter(PLANS, c2);
    const who = subject('pro');
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? first : second).consume(who)));
    expect(results.filter((r) => r!.allowed)).toHaveLength(10);
  });

  it('falls back to a per-process memory limit when Redis is unreachable', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      retryStrategy: () => null,
    });
    redisClients.push(dead);
    dead.connect().catch(() => undefined);
    const limiter = createRateLimiter(PLANS, dead);
    const who = subject('free');
    const allowed = [];
    for (let i = 0; i < 4; i++) allowed.push((await limiter.consume(who))!.allowed);
    expect(allowed).toEqual([true, true, true, false]);
  });
});
