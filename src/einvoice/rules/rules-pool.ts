/**
 * The validation threads (rules-worker.ts): SaxonJS runs the pack's schematrons there, off the event
 * loop, one check per thread at a time. Who checks next is the fair scheduler's choice
 * (../../scheduling/fair-scheduler.ts), a strict pool, as the xmllint threads are: a hostile XML keeps
 * its thread up to the deadline and cannot be taken back, so one account holds at most `threads` − 2
 * threads (each check takes a core), and free work (POST /v1/einvoice/validate) at most `threads` − 1 in
 * all: a paid check always finds one. Threads start on first use and stay, each keeping the stylesheets it loaded.
 *
 * Free checks (issue 49): one account's free checks hold one thread at most, so with three threads a
 * second account's free check never waits behind the first's, however long that one runs; and each
 * account's free checks may hold a thread for FREE_RULES_BUDGET_SECONDS in any FREE_RULES_WINDOW_SECONDS
 * (a check is stopped when it reaches what is left, and past it refused with 429 until the time leaves
 * the window), so an account looping its heaviest invoice takes a bounded share of a free thread.
 *
 * Bounds: a check that has not answered within `timeoutMs` of reaching its thread has the thread
 * terminated (a replacement starts with the next check) and answers XML_TOO_COMPLEX, as one whose
 * thread reached its heap ceiling does; a check waits for a thread at most `timeoutMs` (then 503); at
 * most RULES_QUEUE_LIMIT checks wait, RULES_ACCOUNT_QUEUE_LIMIT of one account (then 503, or 429).
 */
import type { Worker } from 'node:worker_threads';
import { accountSlotsOf, FairScheduler, type PoolStats, type Ticket } from '../../scheduling/fair-scheduler.js';
import { FailureBudget, type FailureBudgetSettings } from '../../scheduling/failure-budget.js';
import { AppError } from '../../shared/errors.js';
import { TaskThreads } from '../../shared/task-threads.js';
import type { RulesAnswer, RulesTask } from './rules-worker.js';
import type { SvrlEntry } from './svrl.js';

/** Checks waiting for a thread: each holds its XML (up to 5 Mi characters), so the line is bounded; an account's share is a quarter. */
const RULES_QUEUE_LIMIT = 64;
const RULES_ACCOUNT_QUEUE_LIMIT = 16;

/**
 * A validation thread's heap: the four stylesheets take about 40 MB once loaded and run; SaxonJS's tree
 * of the largest XML a request may carry (5 Mi characters) and the rules' intermediate sequences over
 * it take several times its size. Past this a check is refused, the process lives on.
 */
const RULES_HEAP_MB = 1024;

/**
 * Rules time one account's free checks may spend per window: a 1,000-line invoice takes ~11 s, the
 * official examples 0.2–0.6 s (docs/performance-log/2026-12-02-issue-49-free-work.md), so this is
 * hundreds of ordinary validations or four checks stopped at the 30 s deadline per ten minutes.
 */
const FREE_RULES_BUDGET_SECONDS = 120;
const FREE_RULES_WINDOW_SECONDS = 600;

export interface RulesPoolOptions {
  readonly threads: number;
  readonly timeoutMs: number;
  /** Rules time of one account's free checks per window (default: FREE_RULES_BUDGET_SECONDS per FREE_RULES_WINDOW_SECONDS). */
  readonly freeBudget?: FailureBudgetSettings;
  /** Called with each thread as it starts (tests end threads with it). */
  readonly onThreadStart?: (worker: Worker) => void;
}

/** Why a check could not give findings. */
export type RulesFailure = { readonly reason: 'unparsable' | 'pack' | 'failed'; readonly message: string };

export class RulesPool {
  readonly #threads: TaskThreads;
  readonly #slots: FairScheduler;
  /** Rules time of each account's free checks (time that earns no credit, counted as failed renders are). */
  readonly #freeTime: FailureBudget;
  readonly #freeBudget: FailureBudgetSettings;
  #nextId = 1;

  constructor(private readonly options: RulesPoolOptions) {
    this.#freeBudget = options.freeBudget ?? {
      budgetSeconds: FREE_RULES_BUDGET_SECONDS,
      windowSeconds: FREE_RULES_WINDOW_SECONDS,
    };
    this.#freeTime = new FailureBudget(this.#freeBudget);
    this.#threads = new TaskThreads({
      callerUrl: import.meta.url,
      worker: 'rules-worker',
      name: 'einvoice-rules',
      heapMb: RULES_HEAP_MB,
      maxIdle: this.options.threads,
      onStart: this.options.onThreadStart,
    });
    this.#slots = new FairScheduler({
      name: 'einvoice-rules',
      limits: {
        capacity: options.threads,
        queueLimit: RULES_QUEUE_LIMIT,
        // One thread fewer than the pool's free share: each check takes a core, and the machine may have two.
        accountSlots: accountSlotsOf(options.threads - 1),
        workConserving: false,
        freeSlots: accountSlotsOf(options.threads),
        accountFreeSlots: 1,
        accountQueueLimit: RULES_ACCOUNT_QUEUE_LIMIT,
        accountFreeQueueLimit: RULES_ACCOUNT_QUEUE_LIMIT,
      },
      words: { task: 'e-invoice rules check', freeTask: 'e-invoice validation', slot: 'e-invoice rules thread' },
      busy: (reason) =>
        new AppError(
          'SERVICE_UNAVAILABLE',
          'The e-invoice rules checks are busy; retry shortly. Nothing was charged.',
          { details: { retryAfterSeconds: 2, reason } },
        ),
    });
  }

  /**
   * Runs the stylesheets on `xml` when `ticket`'s turn comes: one list of SVRL entries per stylesheet,
   * or why there are none. Rejects with XML_TOO_COMPLEX (deadline, heap) and the scheduler's refusals.
   */
  async check(
    xml: string,
    stylesheets: RulesTask['stylesheets'],
    ticket: Ticket,
  ): Promise<SvrlEntry[][] | RulesFailure> {
    const free = ticket.kind === 'free';
    if (free) this.#freeTimeLeftMs(ticket.accountId);
    const release = await this.#slots.acquire(ticket, { maxWaitMs: this.options.timeoutMs });
    const startedAt = performance.now();
    let counted = !free;
    const count = () => {
      if (!counted) this.#freeTime.recordFailure(ticket.accountId, performance.now() - startedAt);
      counted = true;
    };
    try {
      // One free check per account at a time (accountFreeSlots), so what is left is known when it starts.
      const leftMs = free ? this.#freeTimeLeftMs(ticket.accountId) : Infinity;
      const outOfBudget =
        leftMs < this.options.timeoutMs ? () => (count(), this.#overFreeBudget(ticket.accountId)) : undefined;
      return await this.#run(xml, stylesheets, {
        timeoutMs: Math.min(leftMs, this.options.timeoutMs),
        onTimeout: outOfBudget,
      });
    } finally {
      count();
      release();
    }
  }

  /** The rules time the account's free checks have left in the window; throws RATE_LIMITED when none. */
  #freeTimeLeftMs(accountId: string): number {
    const { usedMs, budgetMs } = this.#freeTime.use(accountId);
    if (usedMs >= budgetMs) throw this.#overFreeBudget(accountId);
    return budgetMs - usedMs;
  }

  #overFreeBudget(accountId: string): AppError {
    const { retryAfterSeconds } = this.#freeTime.use(accountId);
    const { budgetSeconds, windowSeconds } = this.#freeBudget;
    const reason = `this account's free validations used their ${budgetSeconds} s of rules-check time in the last ${windowSeconds / 60} minutes`;
    return new AppError(
      'RATE_LIMITED',
      `E-invoice validation refused: ${reason}. Retry after ${retryAfterSeconds} s, or send shorter invoices. Nothing was charged; e-invoices of paid documents are not affected.`,
      {
        details: { retryAfterSeconds: Math.max(1, retryAfterSeconds), reason },
      },
    );
  }

  async #run(
    xml: string,
    stylesheets: RulesTask['stylesheets'],
    bound: { timeoutMs: number; onTimeout: (() => AppError) | undefined },
  ): Promise<SvrlEntry[][] | RulesFailure> {
    const id = this.#nextId++;
    const end = await this.#threads.run<RulesAnswer, RulesAnswer>({
      message: { id, xml, stylesheets } satisfies RulesTask,
      timeoutMs: bound.timeoutMs,
      read: (answer) => (answer?.id === id ? answer : undefined),
    });
    if (end.ended === 'timeout')
      throw bound.onTimeout?.() ?? tooComplex(`did not finish within ${bound.timeoutMs / 1000} s and was stopped`);
    if (end.ended === 'out-of-memory') throw tooComplex(`reached its ${RULES_HEAP_MB} MB heap ceiling and was stopped`);
    if (end.ended === 'failed')
      throw tooComplex(`stopped (${(end.error as Error | undefined)?.message ?? 'its thread exited'})`);
    const answer = end.answer;
    return 'results' in answer ? answer.results : { reason: answer.reason, message: answer.error };
  }

  /** Checks holding a thread and waiting for one (for /metrics). */
  stats(): PoolStats {
    return this.#slots.stats();
  }

  /** Ends the idle threads now and the busy ones once their check answered; a later check starts them again. */
  async close(): Promise<void> {
    await this.#threads.restart();
  }
}

/** A check that ran out of time or memory: the XML asks for more than one check may spend. */
function tooComplex(what: string): AppError {
  return new AppError(
    'XML_TOO_COMPLEX',
    `The e-invoice rules check ${what}; the document asks for more than one check may spend. Nothing was charged. Send a smaller or simpler document.`,
  );
}
