/**
 * The render-time budget for failures: failed and timed-out renders cost no credit, so without a
 * budget a loop of documents built to fail (or time out) would occupy render slots for free. Each
 * account may spend `budgetSeconds` of render time on failures within a sliding `windowSeconds`; an
 * account over it is served after every other account (fair-scheduler.ts), never beyond its slot cap,
 * and, when it waited too long for that reason, refused with RATE_LIMITED and a Retry-After until
 * enough failures leave the window. The render slots use it.
 *
 * Kept in memory, per process (like the scheduler it steers): with several processes an account
 * has a budget in each, and a restart forgets it. Time is counted from the slot being granted to the
 * failure (queueing is not render time); a render the caller aborted does not count. Failures are
 * summed in buckets of a sixtieth of the window, so one leaves the window up to that much early.
 */
import { AppError } from '../shared/errors.js';
import type { BudgetVerdicts } from './fair-scheduler.js';

/** The budget's settings (config.renderFairness). */
export interface FailureBudgetSettings {
  /** Failed render time one account may spend per window. */
  budgetSeconds: number;
  windowSeconds: number;
}

/** An account's failed render time within the window. */
export interface FailureBudgetUse {
  usedMs: number;
  budgetMs: number;
  /** Seconds until the account is back within its budget (0 when it is). */
  retryAfterSeconds: number;
}

/** Failures are summed into this many buckets per window, so memory per account stays bounded. */
const BUCKETS_PER_WINDOW = 60;

interface Bucket {
  startMs: number;
  failedMs: number;
}

/** Per-account failed render time over a sliding window, in memory. */
export class FailureBudget implements BudgetVerdicts {
  readonly #accounts = new Map<string, Bucket[]>();
  readonly #windowMs: number;
  readonly #budgetMs: number;
  readonly #bucketMs: number;
  #recordsSinceSweep = 0;

  constructor(
    settings: FailureBudgetSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.#windowMs = settings.windowSeconds * 1000;
    this.#budgetMs = settings.budgetSeconds * 1000;
    this.#bucketMs = Math.max(1, Math.floor(this.#windowMs / BUCKETS_PER_WINDOW));
  }

  /** Counts `renderMs` of failed render time against the account. */
  recordFailure(accountId: string, renderMs: number): void {
    const now = this.now();
    const buckets = this.#current(accountId, now) ?? [];
    const last = buckets.at(-1);
    if (last && now - last.startMs < this.#bucketMs) last.failedMs += renderMs;
    else buckets.push({ startMs: now, failedMs: renderMs });
    this.#accounts.set(accountId, buckets);
    if (++this.#recordsSinceSweep >= 1000) this.#sweep(now);
  }

  /** True when the account's failed render time in the window has reached its budget. */
  isOverBudget(accountId: string): boolean {
    return this.use(accountId).usedMs >= this.#budgetMs;
  }

  /** The account's failed render time in the window, and when it will be back within budget. */
  use(accountId: string): FailureBudgetUse {
    const now = this.now();
    const buckets = this.#current(accountId, now) ?? [];
    const usedMs = buckets.reduce((sum, b) => sum + b.failedMs, 0);
    let remainingMs = usedMs;
    let retryAfterMs = 0;
    // Oldest first: the account is back within budget once enough of them have left the window.
    for (const bucket of buckets) {
      if (remainingMs < this.#budgetMs) break;
      remainingMs -= bucket.failedMs;
      retryAfterMs = bucket.startMs + this.#windowMs - now;
    }
    return { usedMs, budgetMs: this.#budgetMs, retryAfterSeconds: Math.ceil(retryAfterMs / 1000) };
  }

  /** Accounts over their budget now (for /metrics). */
  overBudgetCount(): number {
    let count = 0;
    for (const accountId of [...this.#accounts.keys()]) if (this.isOverBudget(accountId)) count += 1;
    return count;
  }

  overBudgetError(accountId: string, waitedMs: number): AppError {
    const { usedMs, budgetMs, retryAfterSeconds } = this.use(accountId);
    const reason =
      `failed and timed-out renders of this account took ${Math.round(usedMs / 1000)} s of render time in the last ${this.#windowMs / 1000} s ` +
      `(the budget is ${budgetMs / 1000} s), so its renders wait until other accounts' are done, ` +
      `and no render slot became free for it within ${waitedMs} ms`;
    return new AppError('RATE_LIMITED', `Render slots refused: ${reason}. Retry after ${retryAfterSeconds} s.`, {
      details: { retryAfterSeconds: Math.max(1, retryAfterSeconds), reason },
    });
  }

  /** The account's buckets still inside the window (older ones dropped), or undefined when none are. */
  #current(accountId: string, now: number): Bucket[] | undefined {
    const buckets = this.#accounts.get(accountId);
    if (!buckets) return undefined;
    const firstLive = buckets.findIndex((b) => b.startMs > now - this.#windowMs);
    if (firstLive < 0) {
      this.#accounts.delete(accountId);
      return undefined;
    }
    if (firstLive > 0) buckets.splice(0, firstLive);
    return buckets;
  }

  /** Forgets accounts whose failures have all left the window. */
  #sweep(now: number): void {
    this.#recordsSinceSweep = 0;
    for (const accountId of [...this.#accounts.keys()]) this.#current(accountId, now);
  }
}
