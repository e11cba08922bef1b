/**
 * The fair render queue and the failure budget, on their own: who is granted a slot next (by state,
 * never by the clock), the per-account and preview caps, the refusals and their codes.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.js';
import { FailureBudget } from './failure-budget.js';
import { RenderQueue, SlotReclaimed, type Release, type RenderKind, type RenderQueueLimits } from './render-queue.js';

const LONG_WAIT_MS = 60_000;

function limits(overrides: Partial<RenderQueueLimits> = {}): RenderQueueLimits {
  return { capacity: 1, queueLimit: 100, accountSlots: 1, previewSlots: 1, accountQueueLimit: 50, accountPreviewQueueLimit: 50, backfillMs: 0, aloneBackfillMs: 0, aloneWindowMs: 60_000, ...overrides };
}

/** A queue whose grants are recorded in order, as `account:label`. */
function harness(queue: RenderQueue) {
  const granted: string[] = [];
  const releases = new Map<string, Release>();
  const ask = (accountId: string, label: string, kind: RenderKind = 'document', costKey?: string, requeued?: boolean) => {
    const name = `${accountId}:${label}`;
    const done = queue.acquire({ accountId, kind, costKey, requeued }, LONG_WAIT_MS).then((release) => {
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
  /** The permit `name` holds. */
  const permit = (name: string) => {
    const r = releases.get(name);
    if (!r) throw new Error(`${name} holds no slot (granted: ${granted.join(', ')})`);
    return r;
  };
  /** Releases whatever holds a slot, one at a time, until nothing waits; returns the grant order. */
  const drain = async () => {
    await settle();
    while (releases.size > 0) await release([...releases.keys()][0]!);
    return granted;
  };
  return { granted, ask, settle, release, permit, drain };
}

describe('fair order', () => {
  it('grants the account with one waiting before the account with ten waiting', async () => {
    const h = harness(new RenderQueue(limits({ accountSlots: 2 })));
    h.ask('A', 'running');
    for (let i = 0; i < 10; i++) h.ask('A', `w${i}`);
    h.ask('B', 'only');
    await h.settle();
    expect(h.granted).toEqual(['A:running']);
    await h.release('A:running');
    expect(h.granted).toEqual(['A:running', 'B:only']);
  });

  it('takes turns between accounts (round robin) rather than draining the first one', async () => {
    const h = harness(new RenderQueue(limits()));
    h.ask('A', 'running');
    for (let i = 0; i < 3; i++) h.ask('A', `a${i}`);
    for (let i = 0; i < 3; i++) h.ask('B', `b${i}`);
    h.ask('C', 'c0');
    expect(await h.drain()).toEqual(['A:running', 'B:b0', 'C:c0', 'A:a0', 'B:b1', 'A:a1', 'B:b2', 'A:a2']);
  });

  it('grants documents before previews, whoever asked first', async () => {
    const h = harness(new RenderQueue(limits({ capacity: 1, accountSlots: 1 })));
    h.ask('A', 'running');
    h.ask('P', 'preview-1', 'preview');
    h.ask('Q', 'preview-2', 'preview');
    h.ask('B', 'document');
    h.ask('P', 'document');
    // P's document goes ahead of its own earlier preview; P was served last, so Q's preview is next.
    expect(await h.drain()).toEqual(['A:running', 'B:document', 'P:document', 'Q:preview-2', 'P:preview-1']);
  });

  it('serves an account over its failure budget after every other account', async () => {
    let now = 1_000_000;
    const budget = new FailureBudget({ budgetSeconds: 10, windowSeconds: 60 }, () => now);
    budget.recordFailure('X', 6_000);
    budget.recordFailure('X', 5_000);
    budget.recordFailure('Y', 2_000);
    expect(budget.isOverBudget('X')).toBe(true);
    expect(budget.isOverBudget('Y')).toBe(false);
    const h = harness(new RenderQueue(limits(), budget));
    h.ask('A', 'running');
    h.ask('X', 'document');
    h.ask('Y', 'document');
    h.ask('B', 'preview', 'preview');
    // Over budget goes last, even behind a preview.
    expect(await h.drain()).toEqual(['A:running', 'Y:document', 'B:preview', 'X:document']);

    // Once the failures leave the window the account is served in turn again.
    now += 61_000;
    expect(budget.isOverBudget('X')).toBe(false);
    const again = harness(new RenderQueue(limits(), budget));
    again.ask('A', 'running');
    again.ask('X', 'document');
    again.ask('Y', 'document');
    expect(await again.drain()).toEqual(['A:running', 'X:document', 'Y:document']);
  });
});

describe('caps', () => {
  it('one account holds at most accountSlots slots; the others stay free for other accounts', async () => {
    const queue = new RenderQueue(limits({ capacity: 3, accountSlots: 2 }));
    const h = harness(queue);
    for (let i = 0; i < 5; i++) h.ask('A', `a${i}`);
    await h.settle();
    expect(h.granted).toEqual(['A:a0', 'A:a1']);
    expect(queue.active).toBe(2);
    expect(queue.waitingByAccount()).toEqual(new Map([['A', 3]]));
    h.ask('B', 'b0');
    await h.settle();
    expect(h.granted).toEqual(['A:a0', 'A:a1', 'B:b0']);
    expect(queue.waitingByAccount()).toEqual(new Map([['A', 3]]));
  });

  it('previews hold at most previewSlots slots, even with slots free', async () => {
    const queue = new RenderQueue(limits({ capacity: 3, accountSlots: 3, previewSlots: 1 }));
    const h = harness(queue);
    h.ask('P', 'p0', 'preview');
    h.ask('Q', 'q0', 'preview');
    await h.settle();
    expect(h.granted).toEqual(['P:p0']);
    h.ask('B', 'b0');
    h.ask('B', 'b1');
    await h.settle();
    expect(h.granted).toEqual(['P:p0', 'B:b0', 'B:b1']);
    await h.release('P:p0');
    expect(h.granted.at(-1)).toBe('Q:q0');
  });

  it('refuses a render beyond the account line with RATE_LIMITED, and previews beyond theirs', async () => {
    const queue = new RenderQueue(limits({ accountQueueLimit: 2, accountPreviewQueueLimit: 1 }));
    const h = harness(queue);
    h.ask('A', 'running');
    h.ask('A', 'w1');
    h.ask('A', 'w2');
    const third = queue.acquire({ accountId: 'A', kind: 'document' }, LONG_WAIT_MS);
    await expect(third).rejects.toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: 2, reason: expect.stringContaining('PRESSROOM_RENDER_ACCOUNT_QUEUE_LIMIT') } });
    h.ask('P', 'p1', 'preview');
    const secondPreview = queue.acquire({ accountId: 'P', kind: 'preview' }, LONG_WAIT_MS);
    await expect(secondPreview).rejects.toMatchObject({ code: 'RATE_LIMITED', details: { reason: expect.stringContaining('PRESSROOM_RENDER_PREVIEW_QUEUE_LIMIT') } });
    // Another account still gets in line, and everyone in line is served (the preview last).
    h.ask('B', 'b1');
    expect(await h.drain()).toEqual(['A:running', 'B:b1', 'A:w1', 'A:w2', 'P:p1']);
  });

  it('refuses beyond the whole line with RENDERER_BUSY', async () => {
    const queue = new RenderQueue(limits({ queueLimit: 1 }));
    const h = harness(queue);
    h.ask('A', 'running');
    h.ask('B', 'waiting');
    await expect(queue.acquire({ accountId: 'C', kind: 'document' }, LONG_WAIT_MS)).rejects.toMatchObject({ code: 'RENDERER_BUSY' });
    expect(await h.drain()).toEqual(['A:running', 'B:waiting']);
  });

  it('never refuses a render asking again after its loan was taken back: it was admitted already', async () => {
    const queue = new RenderQueue(limits({ queueLimit: 1, accountQueueLimit: 1 }));
    const h = harness(queue);
    h.ask('A', 'running');
    h.ask('A', 'waiting');
    h.ask('A', 'taken-back', 'document', undefined, true);
    expect(await h.drain()).toEqual(['A:running', 'A:taken-back', 'A:waiting']);
  });

  it('a render that waited too long is refused: RENDERER_BUSY, or RATE_LIMITED naming the failure budget', async () => {
    const budget = new FailureBudget({ budgetSeconds: 1, windowSeconds: 600 });
    budget.recordFailure('X', 5_000);
    const queue = new RenderQueue(limits(), budget);
    const h = harness(queue);
    h.ask('A', 'running');
    await h.settle();
    const plain = queue.acquire({ accountId: 'B', kind: 'document' }, 50).catch((e: unknown) => e);
    const over = queue.acquire({ accountId: 'X', kind: 'document' }, 50).catch((e: unknown) => e);
    expect(await plain).toMatchObject({ code: 'RENDERER_BUSY' });
    const refused = (await over) as AppError;
    expect(refused).toBeInstanceOf(AppError);
    expect(refused.code).toBe('RATE_LIMITED');
    expect(refused.message).toMatch(/failed and timed-out renders of this account took 5 s of render time in the last 600 s \(the budget is 1 s/);
    expect(refused.details?.retryAfterSeconds).toBeGreaterThan(500);
    expect(queue.waiting).toBe(0);
    await h.release('A:running');
    expect(queue.active).toBe(0);
  });

  it('an aborted wait leaves the line, and the next one is served', async () => {
    const queue = new RenderQueue(limits());
    const h = harness(queue);
    h.ask('A', 'running');
    const controller = new AbortController();
    const aborted = queue.acquire({ accountId: 'B', kind: 'document' }, LONG_WAIT_MS, controller.signal).catch((e: unknown) => e);
    h.ask('C', 'next');
    controller.abort(new Error('client went away'));
    expect(await aborted).toMatchObject({ message: 'client went away' });
    expect(await h.drain()).toEqual(['A:running', 'C:next']);
    expect(queue.waitingByAccount().size).toBe(0);
  });
});

describe('backfill', () => {
  /** Two slots, one per account, backfill for renders of at most 1 s; the clock is the test's. */
  function backfillQueue(budget?: FailureBudget) {
    const clock = { now: 0 };
    const queue = new RenderQueue(limits({ capacity: 2, accountSlots: 1, backfillMs: 1_000 }), budget, () => clock.now);
    /** Renders of `accountId`'s `costKey`, one after another, each holding its slot for the given ms. */
    const history = async (accountId: string, costKey: string, durations: number[]) => {
      for (const ms of durations) {
        const release = await queue.acquire({ accountId, kind: 'document', costKey }, LONG_WAIT_MS);
        clock.now += ms;
        release({ completed: true });
      }
    };
    return { queue, clock, history, h: harness(queue) };
  }

  it('an account at its cap takes the idle slot for a document whose last renders of that key were short', async () => {
    const { queue, history, h } = backfillQueue();
    // No history yet: the second render waits although a slot is free (the reservation).
    h.ask('A', 'first', 'document', 'invoice');
    h.ask('A', 'second', 'document', 'invoice');
    await h.settle();
    expect(h.granted).toEqual(['A:first']);
    await h.drain();
    expect(queue.backfills).toBe(0);

    // (drain() released without saying they completed: no evidence.) Three completed short renders:
    await history('A', 'invoice', [80, 120, 60]);
    h.ask('A', 'third', 'document', 'invoice');
    h.ask('A', 'fourth', 'document', 'invoice');
    await h.settle();
    expect(h.granted).toEqual(['A:first', 'A:second', 'A:third', 'A:fourth']);
    expect(queue.active).toBe(2);
    expect(queue.backfills).toBe(1);
  });

  it('never for a key with a long render among its last ones, nor for a key without history', async () => {
    const { queue, history, h } = backfillQueue();
    await history('A', 'report', [100, 100, 5_000, 100]);
    await history('A', 'invoice', [100, 100, 100]);
    h.ask('A', 'report-1', 'document', 'report');
    h.ask('A', 'report-2', 'document', 'report');
    h.ask('B', 'other-1', 'document', 'other');
    h.ask('B', 'other-2', 'document', 'other');
    await h.settle();
    expect(h.granted).toEqual(['A:report-1', 'B:other-1']);
    await h.release('A:report-1');
    await h.release('B:other-1');
    expect(h.granted).toEqual(['A:report-1', 'B:other-1', 'A:report-2', 'B:other-2']);
    expect(queue.backfills).toBe(0);
  });

  it('goes after every render within its account cap: another account arriving takes the next free slot', async () => {
    const { queue, history, h } = backfillQueue();
    await history('A', 'invoice', [100, 100, 100]);
    h.ask('A', 'running', 'document', 'invoice');
    h.ask('B', 'running', 'document', 'x');
    h.ask('A', 'waiting', 'document', 'invoice');
    h.ask('C', 'waiting', 'document', 'y');
    await h.settle();
    expect(h.granted).toEqual(['A:running', 'B:running']);
    await h.release('B:running');
    expect(h.granted.at(-1)).toBe('C:waiting');
    await h.release('C:waiting');
    expect(h.granted.at(-1)).toBe('A:waiting');
    expect(queue.backfills).toBe(1);
  });

  it('short renders that did not complete are no evidence; a long one always counts', async () => {
    const { queue, clock, h } = backfillQueue();
    const render = async (ms: number, completed: boolean) => {
      const release = await queue.acquire({ accountId: 'A', kind: 'document', costKey: 'k' }, LONG_WAIT_MS);
      clock.now += ms;
      release({ completed });
    };
    // Three quick failures (or aborts): nothing is known about how long 'k' takes.
    for (let i = 0; i < 3; i++) await render(10, false);
    h.ask('A', 'one', 'document', 'k');
    h.ask('A', 'two', 'document', 'k');
    await h.settle();
    expect(h.granted).toEqual(['A:one']);
    await h.drain();
    // drain() released without an outcome; two completed short renders and one long failure follow:
    // the failure's length counts, so still no backfill.
    await render(10, true);
    await render(10, true);
    await render(5_000, false);
    await render(10, true);
    h.ask('A', 'three', 'document', 'k');
    h.ask('A', 'four', 'document', 'k');
    await h.settle();
    expect(h.granted).toEqual(['A:one', 'A:two', 'A:three']);
    expect(queue.backfills).toBe(0);
  });

  it('never for previews, for an account over its failure budget, or with backfillMs 0', async () => {
    const budget = new FailureBudget({ budgetSeconds: 1, windowSeconds: 600 });
    budget.recordFailure('X', 5_000);
    const { queue, history, h } = backfillQueue(budget);
    await history('X', 'invoice', [100, 100, 100]);
    h.ask('X', 'running', 'document', 'invoice');
    h.ask('X', 'waiting', 'document', 'invoice');
    await h.settle();
    expect(h.granted).toEqual(['X:running']);
    await h.drain();

    const previews = new RenderQueue(limits({ capacity: 2, accountSlots: 1, previewSlots: 2, backfillMs: 1_000 }), undefined, () => 0);
    const p = harness(previews);
    for (let i = 0; i < 3; i++) await previews.acquire({ accountId: 'P', kind: 'preview', costKey: 'k' }, LONG_WAIT_MS).then((release) => release({ completed: true }));
    p.ask('P', 'one', 'preview', 'k');
    p.ask('P', 'two', 'preview', 'k');
    await p.settle();
    expect(p.granted).toEqual(['P:one']);

    const off = new RenderQueue(limits({ capacity: 2, accountSlots: 1, backfillMs: 0 }), undefined, () => 0);
    const o = harness(off);
    for (let i = 0; i < 3; i++) await off.acquire({ accountId: 'A', kind: 'document', costKey: 'k' }, LONG_WAIT_MS).then((release) => release({ completed: true }));
    o.ask('A', 'one', 'document', 'k');
    o.ask('A', 'two', 'document', 'k');
    await o.settle();
    expect(o.granted).toEqual(['A:one']);
    expect(queue.backfills + previews.backfills + off.backfills).toBe(0);
  });
});

describe('backfill for an account alone', () => {
  /** Two slots, one per account; backfill within 1 s, or 10 s while alone (window 60 s); the test's clock. */
  function aloneQueue() {
    const clock = { now: 0 };
    const queue = new RenderQueue(limits({ capacity: 2, accountSlots: 1, backfillMs: 1_000, aloneBackfillMs: 10_000, aloneWindowMs: 60_000 }), undefined, () => clock.now);
    const render = async (accountId: string, costKey: string, ms: number, completed = true) => {
      const release = await queue.acquire({ accountId, kind: 'document', costKey }, LONG_WAIT_MS);
      clock.now += ms;
      release({ completed });
    };
    const h = harness(queue);
    /** A's two documents of `costKey` asked for at once; settled. */
    const askTwo = async (first: string, second: string, costKey: string) => {
      h.ask('A', first, 'document', costKey);
      h.ask('A', second, 'document', costKey);
      await h.settle();
    };
    return { queue, clock, render, h, askTwo };
  }

  it('takes the idle slot for documents of a few seconds while no other account has asked for a render', async () => {
    const { queue, render, h, askTwo } = aloneQueue();
    for (let i = 0; i < 3; i++) await render('A', 'report', 5_000);
    await askTwo('one', 'two', 'report');
    expect(h.granted).toEqual(['A:one', 'A:two']);
    expect(queue.backfills).toBe(1);
  });

  it('not while another account asked within the window, nor for renders longer than the alone bound', async () => {
    const { queue, clock, render, h, askTwo } = aloneQueue();
    for (let i = 0; i < 3; i++) await render('A', 'report', 5_000);
    for (let i = 0; i < 3; i++) await render('A', 'ledger', 12_000);
    await render('B', 'invoice', 100); // B was here 36.1 s before the asks below, within the window of 60 s
    await askTwo('one', 'two', 'report');
    expect(h.granted).toEqual(['A:one']);
    await h.drain();

    clock.now += 60_000; // B is out of the window: A is alone, for its reports but not its 12 s ledgers
    await askTwo('three', 'four', 'report');
    expect(h.granted).toEqual(['A:one', 'A:two', 'A:three', 'A:four']);
    await h.drain();
    await askTwo('ledger-1', 'ledger-2', 'ledger');
    expect(h.granted.slice(4)).toEqual(['A:ledger-1']);
    await h.drain();
    expect(queue.backfills).toBe(1);
  });

  it('an account that arrives takes the lent slot back at once, and ends the other\'s being alone', async () => {
    const { queue, render, h, askTwo } = aloneQueue();
    await render('A', 'report', 5_000);
    h.ask('A', 'one', 'document', 'report');
    await askTwo('two', 'three', 'report');
    expect(h.granted).toEqual(['A:one', 'A:two']);
    expect(h.permit('A:one').reclaimed).toBeUndefined(); // within its cap: never taken back
    const loan = h.permit('A:two').reclaimed!;
    expect(loan.aborted).toBe(false);

    h.ask('B', 'invoice', 'document', 'invoice');
    await h.settle();
    expect(loan.aborted).toBe(true);
    expect(loan.reason).toBeInstanceOf(SlotReclaimed);
    expect(queue.reclaims).toBe(1);
    expect(h.granted.at(-1)).toBe('A:two'); // B waits only for that print to stop
    h.ask('A', 'two-again', 'document', 'report', true); // the lent render asks again...
    await h.release('A:two'); // ...and lets go of the slot
    expect(h.granted.at(-1)).toBe('B:invoice');

    // B asked just now: A is held to its one slot, where the render taken back goes before A's later ones.
    await h.release('A:one');
    expect(h.granted.at(-1)).toBe('A:two-again');
    await h.release('B:invoice');
    expect(h.granted.at(-1)).toBe('A:two-again');
    await h.release('A:two-again');
    expect(h.granted.at(-1)).toBe('A:three');
    expect(queue.backfills).toBe(1);
    expect(queue.reclaims).toBe(1);
  });

  it('takes back the youngest loan, one per render within its cap that waits', async () => {
    const clock = { now: 0 };
    const queue = new RenderQueue(limits({ capacity: 3, accountSlots: 1, backfillMs: 1_000, aloneBackfillMs: 10_000 }), undefined, () => clock.now);
    const h = harness(queue);
    const first = await queue.acquire({ accountId: 'A', kind: 'document', costKey: 'report' }, LONG_WAIT_MS);
    clock.now += 5_000;
    first({ completed: true });
    for (const label of ['one', 'two', 'three']) h.ask('A', label, 'document', 'report');
    await h.settle();
    expect(h.granted).toEqual(['A:one', 'A:two', 'A:three']);
    const [older, younger] = [h.permit('A:two').reclaimed!, h.permit('A:three').reclaimed!];

    h.ask('B', 'b1', 'document', 'invoice');
    h.ask('B', 'b2', 'document', 'invoice'); // beyond B's cap: takes nothing back
    await h.settle();
    expect([older.aborted, younger.aborted]).toEqual([false, true]);
    await h.release('A:three');
    expect(h.granted.at(-1)).toBe('B:b1');
    expect(older.aborted).toBe(false);

    h.ask('C', 'c1', 'document', 'invoice');
    await h.settle();
    expect(older.aborted).toBe(true);
    await h.release('A:two');
    expect(h.granted.at(-1)).toBe('C:c1');
    expect(queue.reclaims).toBe(2);
  });

  it('alone, one delivered render of a kind is evidence enough; with others about, three are needed', async () => {
    const { queue, render, h, askTwo } = aloneQueue();
    await askTwo('first', 'second', 'report'); // nothing known yet: one at a time
    expect(h.granted).toEqual(['A:first']);
    await h.drain(); // released without an outcome: no evidence
    await render('A', 'report', 5_000);
    await render('A', 'invoice', 100);
    await askTwo('third', 'fourth', 'report');
    expect(h.granted.slice(2)).toEqual(['A:third', 'A:fourth']);
    await h.drain();

    await render('B', 'x', 100); // B is about now: A's one short invoice is not enough
    await askTwo('invoice-1', 'invoice-2', 'invoice');
    expect(h.granted.slice(4)).toEqual(['A:invoice-1']);
    await h.drain();
    expect(queue.backfills).toBe(1);
  });

  it('a failure that held its slot past the short bound is no evidence under the alone bound', async () => {
    const { queue, render, h, askTwo } = aloneQueue();
    await render('A', 'report', 5_000);
    await render('A', 'report', 3_000, false);
    await render('A', 'report', 5_000);
    await render('A', 'report', 5_000);
    await askTwo('one', 'two', 'report');
    expect(h.granted).toEqual(['A:one']);
    expect(queue.backfills).toBe(0);
  });
});
