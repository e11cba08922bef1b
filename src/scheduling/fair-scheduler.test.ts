/**
 * The fair scheduler and the failure budget, on their own: who is granted a slot next, decided by
 * granting and releasing (never by the clock), the caps of both kinds of pool, the refusals and their codes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError } from '../shared/errors.js';
import { FailureBudget } from './failure-budget.js';
import {
  accountSlotsOf,
  FairScheduler,
  type BudgetVerdicts,
  type Release,
  type SchedulerLimits,
  type TaskKind,
} from './fair-scheduler.js';

function scheduler(overrides: Partial<SchedulerLimits> = {}, budget?: BudgetVerdicts): FairScheduler {
  return new FairScheduler({
    name: 'test',
    limits: {
      capacity: 1,
      queueLimit: 100,
      accountSlots: 1,
      workConserving: true,
      freeSlots: 1,
      accountQueueLimit: 50,
      accountFreeQueueLimit: 50,
      ...overrides,
    },
    words: { task: 'render', freeTask: 'preview', slot: 'render slot' },
    busy: (reason) =>
      new AppError('RENDERER_BUSY', 'The renderer is busy; retry shortly', {
        details: { retryAfterSeconds: 2, reason },
      }),
    budget,
  });
}

/** A scheduler whose grants are recorded in order, as `account:label`. */
function harness(pool: FairScheduler) {
  const granted: string[] = [];
  const releases = new Map<string, Release>();
  const ask = (accountId: string, label: string, kind: TaskKind = 'paid') => {
    const name = `${accountId}:${label}`;
    const done = pool.acquire({ accountId, kind }).then((release) => {
      granted.push(name);
      releases.set(name, release);
    });
    return { name, done };
  };
  /** Lets every settled acquire run its callback (grants resolve promises). */
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const release = async (name: string) => {
    const r = releases.get(name);
    if (!r) throw new Error(`${name} holds no slot (granted: ${granted.join(', ')})`);
    releases.delete(name);
    r();
    await settle();
  };
  /** Releases whatever holds a slot, oldest first, until nothing waits; returns the grant order. */
  const drain = async () => {
    await settle();
    while (releases.size > 0) await release([...releases.keys()][0]!);
    return granted;
  };
  return { granted, ask, settle, release, drain };
}

describe('fair order', () => {
  it('grants the account with one waiting before the account with ten waiting', async () => {
    const h = harness(scheduler({ accountSlots: 2 }));
    h.ask('A', 'running');
    for (let i = 0; i < 10; i++) h.ask('A', `w${i}`);
    h.ask('B', 'only');
    await h.settle();
    expect(h.granted).toEqual(['A:running']);
    await h.release('A:running');
    expect(h.granted).toEqual(['A:running', 'B:only']);
  });

  it('takes turns between accounts (round robin) rather than draining the first one', async () => {
    const h = harness(scheduler());
    h.ask('A', 'running');
    for (let i = 0; i < 3; i++) h.ask('A', `a${i}`);
    for (let i = 0; i < 3; i++) h.ask('B', `b${i}`);
    h.ask('C', 'c0');
    expect(await h.drain()).toEqual(['A:running', 'B:b0', 'C:c0', 'A:a0', 'B:b1', 'A:a1', 'B:b2', 'A:a2']);
  });

  it('grants paid work before free work, whoever asked first; an account its own paid work first', async () => {
    const h = harness(scheduler());
    h.ask('A', 'running');
    h.ask('P', 'preview-1', 'free');
    h.ask('Q', 'preview-2', 'free');
    h.ask('B', 'document');
    h.ask('P', 'document');
    // P's document goes ahead of its own earlier preview; P was served last, so Q's preview is next.
    expect(await h.drain()).toEqual(['A:running', 'B:document', 'P:document', 'Q:preview-2', 'P:preview-1']);
  });

  it('serves an account over its failure budget after every other account, then in turn once its failures left the window', async () => {
    let now = 1_000_000;
    const budget = new FailureBudget({ budgetSeconds: 10, windowSeconds: 60 }, () => now);
    budget.recordFailure('X', 6_000);
    budget.recordFailure('X', 5_000);
    budget.recordFailure('Y', 2_000);
    expect(budget.isOverBudget('X')).toBe(true);
    expect(budget.isOverBudget('Y')).toBe(false);
    const h = harness(scheduler({}, budget));
    h.ask('A', 'running');
    h.ask('X', 'document');
    h.ask('Y', 'document');
    h.ask('B', 'preview', 'free');
    // Over budget goes last, even behind free work.
    expect(await h.drain()).toEqual(['A:running', 'Y:document', 'B:preview', 'X:document']);

    now += 61_000;
    expect(budget.isOverBudget('X')).toBe(false);
    const again = harness(scheduler({}, budget));
    again.ask('A', 'running');
    again.ask('X', 'document');
    again.ask('Y', 'document');
    expect(await again.drain()).toEqual(['A:running', 'X:document', 'Y:document']);
  });
});

describe('a work-conserving pool', () => {
  it('lets a lone account use every slot', async () => {
    const pool = scheduler({ capacity: 3, accountSlots: 1 });
    const h = harness(pool);
    for (let i = 0; i < 4; i++) h.ask('A', `a${i}`);
    await h.settle();
    expect(h.granted).toEqual(['A:a0', 'A:a1', 'A:a2']);
    expect(pool.stats()).toEqual({ pool: 'test', capacity: 3, active: 3, waiting: 1, started: 3 });
  });

  it("gives a newcomer the next slot that frees, before the lone account's own line", async () => {
    const pool = scheduler({ capacity: 2, accountSlots: 1 });
    const h = harness(pool);
    for (let i = 0; i < 4; i++) h.ask('A', `a${i}`);
    h.ask('B', 'b0');
    h.ask('B', 'b1');
    await h.settle();
    expect(h.granted).toEqual(['A:a0', 'A:a1']);
    await h.release('A:a1');
    expect(h.granted.at(-1)).toBe('B:b0');
    // Both hold one slot now, the cap: the next slot goes to whoever was granted longest ago.
    await h.release('A:a0');
    expect(h.granted.at(-1)).toBe('A:a2');
    await h.release('B:b0');
    expect(h.granted.at(-1)).toBe('B:b1');
  });

  it('holds an account at its cap while another account within its cap waits', async () => {
    const pool = scheduler({ capacity: 3, accountSlots: 2 });
    const h = harness(pool);
    h.ask('A', 'a0');
    h.ask('A', 'a1');
    h.ask('B', 'b0');
    await h.settle();
    h.ask('A', 'a2');
    h.ask('B', 'b1');
    await h.release('A:a0');
    // A holds 1 and B 1, both within their cap of 2: A was granted longer ago.
    expect(h.granted.at(-1)).toBe('A:a2');
    await h.release('A:a1');
    expect(h.granted.at(-1)).toBe('B:b1');
  });

  it('gives a slot beyond the cap only when nobody within theirs may take it: not before free work, nor an account over its budget', async () => {
    const budget = new FailureBudget({ budgetSeconds: 1, windowSeconds: 600 });
    budget.recordFailure('X', 5_000);
    const h = harness(scheduler({ capacity: 2, accountSlots: 1, freeSlots: 1 }, budget));
    h.ask('A', 'a0');
    h.ask('A', 'a1');
    await h.settle();
    h.ask('A', 'a2');
    h.ask('P', 'preview', 'free');
    h.ask('X', 'x0');
    await h.release('A:a0'); // A holds one slot, its cap
    expect(h.granted.at(-1)).toBe('P:preview');
    await h.release('A:a1'); // A holds none: within its cap, and X over its budget goes last
    expect(h.granted.at(-1)).toBe('A:a2');
    await h.release('P:preview'); // A at its cap again: X, within its own, goes first
    expect(h.granted.at(-1)).toBe('X:x0');
  });

  it('never lets an account over its failure budget beyond its cap', async () => {
    const budget = new FailureBudget({ budgetSeconds: 1, windowSeconds: 600 });
    budget.recordFailure('X', 5_000);
    const h = harness(scheduler({ capacity: 2, accountSlots: 1 }, budget));
    h.ask('X', 'x0');
    h.ask('X', 'x1');
    await h.settle();
    expect(h.granted).toEqual(['X:x0']);
  });
});

describe('a strict pool', () => {
  it('never gives one account more than its cap, even with slots idle; a second account finds one free', async () => {
    const pool = scheduler({ capacity: 2, accountSlots: accountSlotsOf(2), workConserving: false });
    const h = harness(pool);
    for (let i = 0; i < 4; i++) h.ask('A', `a${i}`);
    await h.settle();
    expect(h.granted).toEqual(['A:a0']);
    expect(pool.stats()).toMatchObject({ active: 1, waiting: 3 });
    h.ask('B', 'b0');
    await h.settle();
    expect(h.granted).toEqual(['A:a0', 'B:b0']);
    await h.release('B:b0');
    expect(h.granted).toEqual(['A:a0', 'B:b0']);
    await h.release('A:a0');
    expect(h.granted.at(-1)).toBe('A:a1');
  });

  it('sizes the cap one slot under the pool, at least one', () => {
    expect([1, 2, 3, 8].map(accountSlotsOf)).toEqual([1, 1, 2, 7]);
  });
});

describe('free work', () => {
  it('holds at most freeSlots slots, even with slots idle; paid work takes the others', async () => {
    const h = harness(scheduler({ capacity: 3, accountSlots: 3, freeSlots: 1 }));
    h.ask('P', 'p0', 'free');
    h.ask('Q', 'q0', 'free');
    await h.settle();
    expect(h.granted).toEqual(['P:p0']);
    h.ask('B', 'b0');
    h.ask('B', 'b1');
    await h.settle();
    expect(h.granted).toEqual(['P:p0', 'B:b0', 'B:b1']);
    await h.release('P:p0');
    expect(h.granted.at(-1)).toBe('Q:q0');
  });

  it('a paid task waits for one of the paid slots at most, however many free tasks wait', async () => {
    const h = harness(scheduler({ capacity: 2, accountSlots: 1, freeSlots: 1 }));
    h.ask('P', 'p0', 'free');
    h.ask('A', 'a0');
    for (let i = 0; i < 3; i++) h.ask('Q', `q${i}`, 'free');
    h.ask('B', 'b0');
    await h.settle();
    expect(h.granted).toEqual(['P:p0', 'A:a0']);
    await h.release('A:a0');
    expect(h.granted.at(-1)).toBe('B:b0');
  });

  it("with accountFreeSlots, one account's free work holds that many slots at most: another account's free task takes the next free slot at once", async () => {
    const pool = scheduler({
      capacity: 3,
      accountSlots: accountSlotsOf(3),
      workConserving: false,
      freeSlots: 2,
      accountFreeSlots: 1,
    });
    const h = harness(pool);
    for (let i = 0; i < 3; i++) h.ask('A', `a${i}`, 'free');
    await h.settle();
    // A free slot and a paid slot idle, yet A's second free task waits.
    expect(h.granted).toEqual(['A:a0']);
    h.ask('B', 'b0', 'free');
    h.ask('C', 'c0', 'free');
    await h.settle();
    expect(h.granted).toEqual(['A:a0', 'B:b0']);
    // Free work holds two slots: the third is paid work's, whoever's.
    h.ask('A', 'paid');
    await h.settle();
    expect(h.granted).toEqual(['A:a0', 'B:b0', 'A:paid']);
    // A's free slot freed: C (never served) goes before A's own next free task.
    await h.release('A:a0');
    expect(h.granted.at(-1)).toBe('C:c0');
    await h.release('B:b0');
    expect(h.granted.at(-1)).toBe('A:a1');
    expect(pool.stats()).toMatchObject({ active: 3, waiting: 1 });
  });

  it("an account's paid work is not held back by its own free work at accountFreeSlots", async () => {
    const h = harness(
      scheduler({ capacity: 3, accountSlots: 2, workConserving: false, freeSlots: 2, accountFreeSlots: 1 }),
    );
    h.ask('A', 'f0', 'free');
    h.ask('A', 'f1', 'free');
    h.ask('A', 'p0');
    await h.settle();
    expect(h.granted).toEqual(['A:f0', 'A:p0']);
  });
});

describe('refusals', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses a task beyond the account line with RATE_LIMITED, and free work beyond its own', async () => {
    const pool = scheduler({ accountQueueLimit: 2, accountFreeQueueLimit: 1 });
    const h = harness(pool);
    h.ask('A', 'running');
    h.ask('A', 'w1');
    h.ask('A', 'w2');
    await expect(pool.acquire({ accountId: 'A', kind: 'paid' })).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('Too many renders of this account are waiting'),
      details: { retryAfterSeconds: 2, reason: expect.stringContaining('(the limit is 2)') },
    });
    h.ask('P', 'p1', 'free');
    await expect(pool.acquire({ accountId: 'P', kind: 'free' })).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      details: { reason: expect.stringMatching(/^1 previews of this account .*\(the limit is 1\)/) },
    });
    // Another account still gets in line, and everyone in line is served (the free task last).
    h.ask('B', 'b1');
    expect(await h.drain()).toEqual(['A:running', 'B:b1', 'A:w1', 'A:w2', 'P:p1']);
  });

  it("refuses beyond the whole line with the pool's busy error, and never a task a slot is free for", async () => {
    const pool = scheduler({ capacity: 2, queueLimit: 0, accountSlots: 1, workConserving: false });
    const h = harness(pool);
    h.ask('A', 'running');
    await expect(pool.acquire({ accountId: 'A', kind: 'paid' })).rejects.toMatchObject({
      code: 'RENDERER_BUSY',
      details: { reason: 'all 2 render slots are busy and 0 renders are already waiting' },
    });
    h.ask('B', 'running');
    expect(await h.drain()).toEqual(['A:running', 'B:running']);
    expect(pool.stats()).toMatchObject({ active: 0, waiting: 0 });
  });

  it('a task that waited past maxWaitMs is refused: the busy error, or RATE_LIMITED naming the failure budget', async () => {
    vi.useFakeTimers();
    const budget = new FailureBudget({ budgetSeconds: 1, windowSeconds: 600 });
    budget.recordFailure('X', 5_000);
    const pool = scheduler({}, budget);
    const running = await pool.acquire({ accountId: 'A', kind: 'paid' });
    const plain = pool.acquire({ accountId: 'B', kind: 'paid' }, { maxWaitMs: 1000 }).catch((e: unknown) => e);
    const over = pool.acquire({ accountId: 'X', kind: 'paid' }, { maxWaitMs: 1000 }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await plain).toMatchObject({
      code: 'RENDERER_BUSY',
      details: { reason: 'no render slot became free within 1000 ms' },
    });
    const refused = (await over) as AppError;
    expect(refused).toBeInstanceOf(AppError);
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.message).toMatch(
      /failed and timed-out renders of this account took 5 s of render time in the last 600 s \(the budget is 1 s/,
    );
    expect(refused.details?.retryAfterSeconds).toBeGreaterThan(500);
    expect(pool.stats()).toMatchObject({ active: 1, waiting: 0 });
    running();
    expect(pool.active).toBe(0);
  });

  it('an aborted wait leaves the line, and the next one is served', async () => {
    const pool = scheduler();
    const h = harness(pool);
    h.ask('A', 'running');
    const controller = new AbortController();
    const aborted = pool
      .acquire({ accountId: 'B', kind: 'paid' }, { signal: controller.signal })
      .catch((e: unknown) => e);
    h.ask('C', 'next');
    controller.abort(new Error('client went away'));
    expect(await aborted).toMatchObject({ message: 'client went away' });
    expect(pool.waitingByAccount()).toEqual(new Map([['C', 1]]));
    expect(await h.drain()).toEqual(['A:running', 'C:next']);
    expect(pool.waitingByAccount().size).toBe(0);
    await expect(
      pool.acquire({ accountId: 'D', kind: 'paid' }, { signal: AbortSignal.abort(new Error('already gone')) }),
    ).rejects.toThrow('already gone');
  });

  it('refuseAll empties the line at shutdown; a release twice frees one slot', async () => {
    const pool = scheduler({ capacity: 2, accountSlots: 2 });
    const first = await pool.acquire({ accountId: 'A', kind: 'paid' });
    await pool.acquire({ accountId: 'A', kind: 'paid' });
    const waiting = pool.acquire({ accountId: 'B', kind: 'paid' }).catch((e: unknown) => e);
    pool.refuseAll(new AppError('SERVICE_UNAVAILABLE', 'shutting down'));
    expect(await waiting).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    first();
    first();
    expect(pool.stats()).toMatchObject({ active: 1, waiting: 0 });
  });
});

describe('run', () => {
  it('holds the slot while the task runs and gives it back when it fails', async () => {
    const pool = scheduler({ capacity: 1 });
    let running = 0;
    let most = 0;
    const task = (fail: boolean) => async () => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      if (fail) throw new Error('failed');
      return 'ok';
    };
    const results = await Promise.allSettled([
      pool.run({ accountId: 'A', kind: 'paid' }, task(true)),
      pool.run({ accountId: 'B', kind: 'paid' }, task(false)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(most).toBe(1);
    expect(pool.load('A') + pool.load('B')).toBe(0);
  });
});
