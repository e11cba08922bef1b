/**
 * The one fairness rule for every pool of heavy work in a process (render slots, qpdf, Ghostscript,
 * compaction threads, xmllint threads, JSON parse threads): `capacity` tasks hold a slot at once, the
 * rest wait, bounded; who goes next is decided by account, not by arrival. Each pool makes its own
 * instance. State: per account, the slots it holds and its line of waiting tasks (arrival order) and
 * when it was last granted a slot; in all, the slots held, those held by free work, and the waiting count.
 *
 * A task asks with its account and its kind: `paid` (documents, PDF tool runs, the e-invoice checks of
 * a paid request) or `free` (previews). When a slot frees, or a task arrives to a free slot, the next
 * task is chosen among the accounts that may take one, by:
 *   1. accounts within their cap (`accountSlots`) before accounts at it;
 *   2. accounts over their failure budget (failure-budget.ts) last;
 *   3. paid before free;
 *   4. the account holding the fewest slots, then the one granted longest ago (round robin);
 *   5. within an account, arrival order (its paid tasks before its free ones).
 * Free work holds at most `freeSlots` slots in all, even with slots idle, so paid work never waits
 * behind more than the other slots' tasks; and, where a pool sets `accountFreeSlots`, one account's free
 * work at most that many, so another account's free task finds one of the other free slots (issue 49).
 *
 * The cap, per pool (`workConserving`):
 * - work-conserving (renders, compaction, JSON parse): a slot nobody within their cap may take goes to
 *   an account at its cap (within its failure budget), so a lone account uses every slot. An account
 *   that arrives then waits for the first running task to finish (about one task, at most the pool's
 *   deadline), and is served first. No running task is ever stopped to give its slot back: none of the
 *   tested guarantees needs it; only "a newcomer never waits for a lone account's work" would.
 * - strict (qpdf, Ghostscript, xmllint): an account never holds more than `accountSlots`, even with
 *   slots idle. These tasks take milliseconds on ordinary input but up to their whole deadline on a
 *   hostile one, and cannot be taken back; a newcomer must not wait for them (issue 37). With
 *   `accountSlots` = capacity − 1, a second account always finds a slot.
 *
 * Refusals, checked only for a task that has to wait: the whole line full (`queueLimit`) → the pool's
 * busy error (503); the account's line full (`accountQueueLimit`, of which `accountFreeQueueLimit` free)
 * → RATE_LIMITED (429); waited past `maxWaitMs` → the busy error, or the failure budget's RATE_LIMITED
 * for an account over it (it waited behind everyone on purpose). An aborted wait leaves the line.
 *
 * In memory, per process: it shares this process's slots, nothing else.
 */
import { AppError } from '../shared/errors.js';

/** Paid work (documents, tool runs, e-invoice checks of a paid request) goes before free work (previews). */
export type TaskKind = 'paid' | 'free';

/** Who a task is for. Tasks without an account share the account `''`. */
export interface Ticket {
  readonly accountId: string;
  readonly kind: TaskKind;
}

/** A pool's slots and lines. */
export interface SchedulerLimits {
  /** Tasks at once. */
  readonly capacity: number;
  /** Tasks waiting, all accounts together. */
  readonly queueLimit: number;
  /** Slots one account holds while another account's task waits (strict pools: ever). */
  readonly accountSlots: number;
  /** May an account at its cap take a slot nobody else may take (see the top of the file)? */
  readonly workConserving: boolean;
  /** Slots free work may hold, all accounts together, even with slots idle. */
  readonly freeSlots: number;
  /** Slots one account's free work may hold, even with slots idle; unset: only `accountSlots` applies. */
  readonly accountFreeSlots?: number;
  /** Tasks one account may have waiting. */
  readonly accountQueueLimit: number;
  /** Free tasks one account may have waiting. */
  readonly accountFreeQueueLimit: number;
}

/** What the scheduler asks of a failure budget: who is over it, and the refusal that says so. */
export interface BudgetVerdicts {
  isOverBudget(accountId: string): boolean;
  /** The RATE_LIMITED error for a task of an over-budget account that waited too long. */
  overBudgetError(accountId: string, waitedMs: number): AppError;
}

export interface FairSchedulerOptions {
  /** The pool's name in metrics (`pool` label) and logs: `render`, `qpdf`, `xmllint`… */
  readonly name: string;
  readonly limits: SchedulerLimits;
  /** What a task, a free task and a slot are called in refusals: `{ task: 'render', freeTask: 'preview', slot: 'render slot' }`. */
  readonly words: { readonly task: string; readonly freeTask?: string; readonly slot: string };
  /** The pool's busy error (503) for a full line or a wait too long, with the reason. */
  readonly busy: (reason: string) => AppError;
  readonly budget?: BudgetVerdicts;
}

/** How long a task may wait, and what takes it out of the line. */
export interface WaitOptions {
  /** Past it the task is refused (busy, or over budget); without it, it waits as long as it takes. */
  readonly maxWaitMs?: number;
  readonly signal?: AbortSignal;
}

/** Gives the slot back; calling it more than once is harmless. */
export type Release = () => void;

/** A pool's state, for metrics. */
export interface PoolStats {
  readonly pool: string;
  readonly capacity: number;
  readonly active: number;
  readonly waiting: number;
  /** Tasks granted a slot since the pool was made. */
  readonly started: number;
}

interface Waiter {
  readonly seq: number;
  readonly kind: TaskKind;
  grant(release: Release): void;
  refuse(error: unknown): void;
}

interface AccountLine {
  active: number;
  /** Of `active`, the free tasks. */
  activeFree: number;
  /** Arrival order, paid and free together. */
  readonly waiting: Waiter[];
  /** When this account was last granted a slot (a counter), for round robin among equals. */
  lastGrant: number;
}

/** The fair scheduler of one pool (see the top of the file). */
export class FairScheduler {
  readonly name: string;
  readonly #limits: SchedulerLimits;
  readonly #options: FairSchedulerOptions;
  readonly #accounts = new Map<string, AccountLine>();
  #active = 0;
  #activeFree = 0;
  #waiting = 0;
  #seq = 0;
  #grants = 0;

  constructor(options: FairSchedulerOptions) {
    this.name = options.name;
    this.#limits = options.limits;
    this.#options = options;
  }

  /** Tasks holding a slot. */
  get active(): number {
    return this.#active;
  }

  /** Tasks waiting for one. */
  get waiting(): number {
    return this.#waiting;
  }

  stats(): PoolStats {
    return {
      pool: this.name,
      capacity: this.#limits.capacity,
      active: this.#active,
      waiting: this.#waiting,
      started: this.#grants,
    };
  }

  /** Tasks waiting, per account that has any. */
  waitingByAccount(): Map<string, number> {
    const result = new Map<string, number>();
    for (const [accountId, line] of this.#accounts)
      if (line.waiting.length > 0) result.set(accountId, line.waiting.length);
    return result;
  }

  /** Tasks of the account holding a slot or waiting for one. */
  load(accountId: string): number {
    const line = this.#accounts.get(accountId);
    return line ? line.active + line.waiting.length : 0;
  }

  /**
   * Waits for a slot. Rejects with the busy error when the line is full or the wait too long, with
   * RATE_LIMITED when the account has too much waiting already (or waited too long while over its
   * failure budget), and with the signal's reason when it aborts.
   */
  acquire(ticket: Ticket, wait: WaitOptions = {}): Promise<Release> {
    const { signal, maxWaitMs } = wait;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const line = this.#line(ticket.accountId);
    return new Promise<Release>((resolve, reject) => {
      const startedAt = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        seq: ++this.#seq,
        kind: ticket.kind,
        grant: (release) => {
          cleanup();
          resolve(release);
        },
        refuse: (error) => {
          cleanup();
          reject(error);
        },
      };
      const onAbort = () => this.#leave(ticket.accountId, waiter, signal!.reason);
      // Limits apply only to a task that has to wait: checked with everyone else already in line.
      const refusal = this.#refusal(ticket, line);
      line.waiting.push(waiter);
      this.#waiting += 1;
      this.#dispatch();
      if (!line.waiting.includes(waiter)) return;
      if (refusal) return this.#leave(ticket.accountId, waiter, refusal);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (maxWaitMs !== undefined) {
        timer = setTimeout(() => {
          const waitedMs = Math.round(performance.now() - startedAt);
          const { budget } = this.#options;
          this.#leave(
            ticket.accountId,
            waiter,
            budget?.isOverBudget(ticket.accountId)
              ? budget.overBudgetError(ticket.accountId, waitedMs)
              : this.#options.busy(`no ${this.#options.words.slot} became free within ${maxWaitMs} ms`),
          );
        }, maxWaitMs);
      }
    });
  }

  /** Runs `task` once a slot is granted, and gives the slot back when it settles. */
  async run<T>(ticket: Ticket, task: () => Promise<T>, wait?: WaitOptions): Promise<T> {
    const release = await this.acquire(ticket, wait);
    try {
      return await task();
    } finally {
      release();
    }
  }

  /** Refuses everyone waiting (shutdown). */
  refuseAll(error: unknown): void {
    for (const [accountId, line] of [...this.#accounts]) {
      for (const waiter of [...line.waiting]) this.#leave(accountId, waiter, error);
    }
  }

  /** Why a task that has to wait may not, or undefined when it may. */
  #refusal(ticket: Ticket, line: AccountLine): AppError | undefined {
    const { limits, words, busy } = this.#options;
    const tasks = `${words.task}s`;
    if (this.#waiting >= limits.queueLimit) {
      return busy(
        `all ${limits.capacity} ${words.slot}s are busy and ${limits.queueLimit} ${tasks} are already waiting`,
      );
    }
    if (line.waiting.length >= limits.accountQueueLimit) {
      return accountLimited(
        tasks,
        `${line.waiting.length} ${tasks} of this account are already waiting for a ${words.slot} (the limit is ${limits.accountQueueLimit})`,
      );
    }
    const free = line.waiting.filter((w) => w.kind === 'free').length;
    if (ticket.kind === 'free' && free >= limits.accountFreeQueueLimit) {
      return accountLimited(
        tasks,
        `${free} ${words.freeTask ?? `free ${words.task}`}s of this account are already waiting for a ${words.slot} (the limit is ${limits.accountFreeQueueLimit})`,
      );
    }
    return undefined;
  }

  /** Grants free slots to the fairest waiters until no slot is free or nobody may take one. */
  #dispatch(): void {
    while (this.#active < this.#limits.capacity) {
      const next = this.#pickNext();
      if (!next) return;
      const { line, waiter } = next;
      line.waiting.splice(line.waiting.indexOf(waiter), 1);
      this.#waiting -= 1;
      line.active += 1;
      line.lastGrant = ++this.#grants;
      this.#active += 1;
      if (waiter.kind === 'free') {
        this.#activeFree += 1;
        line.activeFree += 1;
      }
      waiter.grant(this.#releaser(next.accountId, line, waiter.kind));
    }
  }

  /** The waiter with the smallest fair-order key (see the top of the file), or none that may start. */
  #pickNext(): { accountId: string; line: AccountLine; waiter: Waiter } | undefined {
    const { limits, budget } = this.#options;
    const freeSlotLeft = this.#activeFree < limits.freeSlots;
    let best: { accountId: string; line: AccountLine; waiter: Waiter; key: number[] } | undefined;
    for (const [accountId, line] of this.#accounts) {
      const mayTakeFree = freeSlotLeft && line.activeFree < (limits.accountFreeSlots ?? Infinity);
      const waiter = line.waiting.find((w) => w.kind === 'paid') ?? (mayTakeFree ? line.waiting[0] : undefined);
      if (!waiter) continue;
      const overBudget = budget?.isOverBudget(accountId) === true;
      const atCap = line.active >= limits.accountSlots;
      if (atCap && (!limits.workConserving || overBudget)) continue;
      const key = [
        atCap ? 1 : 0,
        overBudget ? 1 : 0,
        waiter.kind === 'free' ? 1 : 0,
        line.active,
        line.lastGrant,
        waiter.seq,
      ];
      if (!best || isBefore(key, best.key)) best = { accountId, line, waiter, key };
    }
    return best;
  }

  #releaser(accountId: string, line: AccountLine, kind: TaskKind): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      line.active -= 1;
      this.#active -= 1;
      if (kind === 'free') {
        this.#activeFree -= 1;
        line.activeFree -= 1;
      }
      this.#forgetIdle(accountId, line);
      this.#dispatch();
    };
  }

  #line(accountId: string): AccountLine {
    let line = this.#accounts.get(accountId);
    if (!line) {
      line = { active: 0, activeFree: 0, waiting: [], lastGrant: 0 };
      this.#accounts.set(accountId, line);
    }
    return line;
  }

  /** Takes a waiter out of the line and refuses it with `error` (it frees no slot, so nobody else moves). */
  #leave(accountId: string, waiter: Waiter, error: unknown): void {
    const line = this.#accounts.get(accountId);
    const index = line?.waiting.indexOf(waiter) ?? -1;
    if (!line || index < 0) return;
    line.waiting.splice(index, 1);
    this.#waiting -= 1;
    this.#forgetIdle(accountId, line);
    waiter.refuse(error);
  }

  /** Drops an account with nothing running or waiting, so the map holds only busy accounts. */
  #forgetIdle(accountId: string, line: AccountLine): void {
    if (line.active === 0 && line.waiting.length === 0 && this.#accounts.get(accountId) === line)
      this.#accounts.delete(accountId);
  }
}

/** The per-account cap of a pool: one slot fewer than the pool, so another account always has one. */
export function accountSlotsOf(capacity: number): number {
  return Math.max(1, capacity - 1);
}

/** Lexicographic comparison of two fair-order keys. */
function isBefore(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

function accountLimited(tasks: string, reason: string): AppError {
  return new AppError('RATE_LIMITED', `Too many ${tasks} of this account are waiting: ${reason}. Retry after 2 s.`, {
    details: { retryAfterSeconds: 2, reason },
  });
}
