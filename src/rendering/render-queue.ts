/**
 * The render slots, shared fairly between accounts: `capacity` renders run at once and the rest wait,
 * bounded and for a limited time. Who waits next is not first come, first served:
 *
 * - **Caps.** One account holds at most `accountSlots` slots and previews together at most
 *   `previewSlots`, so a noisy account, or a burst of free previews, always leaves slots to the others.
 *   One account may have at most `accountQueueLimit` renders waiting, of which at most
 *   `accountPreviewQueueLimit` previews; beyond that it is refused with RATE_LIMITED (429).
 * - **Order.** When a slot frees, the next render is chosen among the accounts that may take one, by:
 *   1. accounts over their failure budget (failure-budget.ts) last;
 *   2. documents (sync and jobs) before previews;
 *   3. the account holding the fewest slots first, then the one granted longest ago (round robin);
 *   4. within an account, its own renders in arrival order.
 * - **Backfill.** An account at its cap may still take a free slot that nobody else may take, for a
 *   document expected to be short: its last renders of the same kind (`costKey`: the template, its
 *   options and the size of its data) each delivered its document within `backfillMs` of getting a
 *   slot. An account that arrives then waits for the first slot to free, so about `backfillMs` at
 *   worst, instead of a slot staying idle while one account's line is full (the reservation's cost
 *   for a single busy tenant). A render that overruns puts its long duration into that history, which
 *   stops its key backfilling.
 * - **Lending.** An account **alone** — no other account has asked for a render within `aloneWindowMs`,
 *   and none is rendering or waiting — is *lent* a free slot for documents whose renders each took up
 *   to `aloneBackfillMs` (by default any document), and the loan is taken back the moment a render of
 *   another account that is within its cap has to wait: the lent render's `reclaimed` signal aborts,
 *   its caller stops printing, releases the slot (no evidence, no failure) and asks again with
 *   `requeued`, first in its account's line. So the account that arrives waits only for a print to
 *   stop, however long the lent document is; the lender loses the work done on it, and its document
 *   starts again when a slot within its cap frees — when it would have started without the loan.
 * - **Refusals.** The whole line holds at most `queueLimit` renders (then RENDERER_BUSY, 503); a render
 *   that waited `maxWaitMs` is refused with RENDERER_BUSY, or with RATE_LIMITED when its account is
 *   over its failure budget (it waited behind everyone on purpose, and the message says why).
 *
 * The queue is per process, in memory: it shares this process's browser, nothing else.
 */
import { AppError } from '../shared/errors.js';

/** Who a render is for: account caps and order use the account, priority the kind. */
export interface RenderTicket {
  /** The paying (or previewing) account; renders without one share the account `''`. */
  accountId: string;
  kind: RenderKind;
  /**
   * Renders alike (the same template, options and size of data, hashed by the caller): how long this
   * key's last renders held their slot decides whether the next one may backfill. Without it, never.
   */
  costKey?: string;
  /** A render whose lent slot was taken back, asking again: it goes first in its account's line. */
  requeued?: boolean;
}

/** Documents are paid for (sync and jobs); previews are free and go last. */
export type RenderKind = 'document' | 'preview';

/** The slot and line limits (config.renderFairness plus the rendering slice). */
export interface RenderQueueLimits {
  /** Renders at once. */
  capacity: number;
  /** Renders waiting, all accounts together. */
  queueLimit: number;
  /** Slots one account may hold at once. */
  accountSlots: number;
  /** Slots previews (all accounts) may hold at once. */
  previewSlots: number;
  /** Renders one account may have waiting. */
  accountQueueLimit: number;
  /** Previews one account may have waiting. */
  accountPreviewQueueLimit: number;
  /** A document whose key's recent renders each held a slot at most this long may backfill; 0: never. */
  backfillMs: number;
  /**
   * The same, for an account alone (no other account seen within `aloneWindowMs`), whose slot beyond its
   * cap is then a loan, taken back when another account needs it; 0: no more than `backfillMs`.
   */
  aloneBackfillMs: number;
  /** How long after another account's last request an account still counts as not alone. */
  aloneWindowMs: number;
}

/**
 * Renders of one key remembered for backfill, and how many of them must be known before it may: three
 * when others are about (a wrong guess makes another account wait), one for an account alone (a wrong
 * guess costs a newcomer one wait, which the alone bound already allows; the first render of a kind
 * tells its length well, as the same template with data of the same size prints alike).
 */
const BACKFILL_HISTORY = 8;
const BACKFILL_MIN_SAMPLES = 3;
const ALONE_BACKFILL_MIN_SAMPLES = 1;
/** Keys remembered, all accounts together (the oldest is forgotten first). */
const BACKFILL_KEYS = 4096;

/** What the queue asks of the failure budget: who is over it, and the refusal that says so. */
export interface BudgetVerdicts {
  isOverBudget(accountId: string): boolean;
  /** The RATE_LIMITED error for a render of an over-budget account that waited too long. */
  overBudgetError(accountId: string, waitedMs: number): AppError;
}

/**
 * Releases a permit; calling it more than once is harmless. `completed`: the render delivered its
 * document. Only a completed render counts as evidence that its kind is short (backfill); one that
 * failed or was aborted early says nothing about how long the document takes, though any render that
 * held its slot long counts as long. A render whose loan was taken back is no evidence either way.
 */
export interface Release {
  (outcome?: { completed: boolean }): void;
  /**
   * For a slot lent to an account alone (see Lending above): aborts when the queue takes the slot
   * back for another account. The render should stop, release, and ask again with `requeued`.
   */
  readonly reclaimed?: AbortSignal;
}

/** The reason a lent slot's `reclaimed` signal carries. */
export class SlotReclaimed extends Error {
  constructor() {
    super('the render slot lent to this account was taken back for another account');
    this.name = 'SlotReclaimed';
  }
}

/** How a slot was granted beyond the account's cap: short history (waited for), or lent (taken back). */
type Backfill = false | 'short' | 'lent';

interface Waiter {
  seq: number;
  kind: RenderKind;
  costKey: string | undefined;
  grant: (release: Release) => void;
  refuse: (error: unknown) => void;
}

interface AccountLine {
  active: number;
  /** Arrival order; documents and previews together. */
  waiting: Waiter[];
  /** When this account was last granted a slot (a counter), for round robin among equals. */
  lastGrant: number;
}

/** The fair render queue of one process. */
export class RenderQueue {
  readonly #accounts = new Map<string, AccountLine>();
  #active = 0;
  #activePreviews = 0;
  #waiting = 0;
  #seq = 0;
  #grants = 0;
  #backfills = 0;
  #reclaims = 0;
  /** Slots lent now, as their `reclaimed` controllers, oldest first; one taken back stays until released. */
  readonly #loans = new Set<AbortController>();
  /** A loan taken back whose render has not released its slot yet: one at a time. */
  #reclaiming: AbortController | undefined;
  /** How long the last renders of each `accountId \0 costKey` held their slot, newest last (Infinity: a long failure). */
  readonly #durations = new Map<string, number[]>();
  /** When each account last asked for a render, oldest first; pruned to `aloneWindowMs`. */
  readonly #lastSeen = new Map<string, number>();
  /** The shorter backfill bound in use: a failure that held its slot longer is evidence of a long kind. */
  readonly #shortestBoundMs: number;

  /** `now` is injectable so that tests decide how long a render held its slot. */
  constructor(
    private readonly limits: RenderQueueLimits,
    private readonly budget?: BudgetVerdicts,
    private readonly now: () => number = () => performance.now(),
  ) {
    const bounds = [limits.backfillMs, limits.aloneBackfillMs].filter((ms) => ms > 0);
    this.#shortestBoundMs = bounds.length > 0 ? Math.min(...bounds) : 0;
  }

  /** Slots granted beyond an account's cap because they would otherwise have stayed idle (backfill). */
  get backfills(): number {
    return this.#backfills;
  }

  /** Lent slots taken back for another account (see Lending above). */
  get reclaims(): number {
    return this.#reclaims;
  }

  /** Renders holding a permit. */
  get active(): number {
    return this.#active;
  }

  /** Renders waiting for a permit. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Renders waiting, per account that has any. */
  waitingByAccount(): Map<string, number> {
    const result = new Map<string, number>();
    for (const [accountId, line] of this.#accounts) if (line.waiting.length > 0) result.set(accountId, line.waiting.length);
    return result;
  }

  /**
   * Waits for a permit. Rejects with RENDERER_BUSY when the line is full or the wait too long, with
   * RATE_LIMITED when the account has too much waiting already (or waited too long while over its
   * failure budget), and with `signal`'s reason when it aborts.
   */
  acquire(ticket: RenderTicket, maxWaitMs: number, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.#seen(ticket.accountId);
    const line = this.#line(ticket.accountId);
    return new Promise<Release>((resolve, reject) => {
      const startedAt = performance.now();
      const waiter: Waiter = {
        seq: ++this.#seq,
        kind: ticket.kind,
        costKey: ticket.costKey,
        grant: (release) => {
          cleanup();
          resolve(release);
        },
        refuse: (error) => {
          cleanup();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.#remove(ticket.accountId, waiter);
        const waitedMs = Math.round(performance.now() - startedAt);
        waiter.refuse(this.budget?.isOverBudget(ticket.accountId)
          ? this.budget.overBudgetError(ticket.accountId, waitedMs)
          : busy(`no render slot became free within ${maxWaitMs} ms`));
      }, maxWaitMs);
      const onAbort = () => {
        this.#remove(ticket.accountId, waiter);
        waiter.refuse(signal!.reason);
      };
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // Limits apply only to a render that has to wait: checked with everyone else already in line.
      // A render asking again after its loan was taken back was admitted already: never refused here.
      const refusal = ticket.requeued ? undefined : this.#refusal(ticket, line);
      if (ticket.requeued) line.waiting.unshift(waiter);
      else line.waiting.push(waiter);
      this.#waiting += 1;
      this.#dispatch();
      if (refusal && line.waiting.includes(waiter)) {
        this.#remove(ticket.accountId, waiter);
        waiter.refuse(refusal);
      }
    });
  }

  /** Refuses everyone waiting (shutdown). */
  refuseAll(error: unknown): void {
    for (const [accountId, line] of this.#accounts) {
      for (const waiter of [...line.waiting]) {
        this.#remove(accountId, waiter);
        waiter.refuse(error);
      }
    }
  }

  /** Why a render that has to wait may not, or undefined when it may. */
  #refusal(ticket: RenderTicket, line: AccountLine): AppError | undefined {
    const { limits } = this;
    if (this.#waiting >= limits.queueLimit) {
      return busy(`all ${limits.capacity} render slots are busy and ${limits.queueLimit} renders are already waiting`);
    }
    if (line.waiting.length >= limits.accountQueueLimit) {
      return accountLimited(`${line.waiting.length} renders of this account are already waiting for a render slot (the limit is ${limits.accountQueueLimit}, PRESSROOM_RENDER_ACCOUNT_QUEUE_LIMIT)`);
    }
    const previews = line.waiting.filter((w) => w.kind === 'preview').length;
    if (ticket.kind === 'preview' && previews >= limits.accountPreviewQueueLimit) {
      return accountLimited(`${previews} previews of this account are already waiting for a render slot (the limit is ${limits.accountPreviewQueueLimit}, PRESSROOM_RENDER_PREVIEW_QUEUE_LIMIT)`);
    }
    return undefined;
  }

  /**
   * Grants free slots to the fairest waiters until no slot is free or nobody may take one; then, if a
   * render within its account's cap still waits, takes a lent slot back for it.
   */
  #dispatch(): void {
    while (this.#active < this.limits.capacity) {
      const next = this.#pickNext();
      if (!next) break;
      const { accountId, line, waiter, backfill } = next;
      line.waiting.splice(line.waiting.indexOf(waiter), 1);
      this.#waiting -= 1;
      line.active += 1;
      line.lastGrant = ++this.#grants;
      this.#active += 1;
      if (waiter.kind === 'preview') this.#activePreviews += 1;
      if (backfill) this.#backfills += 1;
      waiter.grant(this.#releaser(accountId, line, waiter, backfill === 'lent'));
    }
    this.#reclaimForWaiters();
  }

  /**
   * Takes the youngest loan back (the least work lost) when a render within its account's cap waits
   * and no slot is free: one at a time, since the freed slot goes to that render, and the next
   * dispatch looks again. Accounts over their failure budget take nothing back.
   */
  #reclaimForWaiters(): void {
    if (this.#reclaiming || this.#loans.size === 0 || this.#active < this.limits.capacity) return;
    const previewSlotFree = this.#activePreviews < this.limits.previewSlots;
    const waitsWithinCap = [...this.#accounts].some(([accountId, line]) =>
      line.active < this.limits.accountSlots
      && !this.budget?.isOverBudget(accountId)
      && line.waiting.some((w) => w.kind === 'document' || previewSlotFree));
    if (!waitsWithinCap) return;
    const youngest = [...this.#loans].at(-1)!;
    this.#reclaiming = youngest;
    this.#reclaims += 1;
    youngest.abort(new SlotReclaimed());
  }

  /** The waiter with the smallest fair-order key (see the top of the file), or none that may start. */
  #pickNext(): { accountId: string; line: AccountLine; waiter: Waiter; backfill: Backfill } | undefined {
    let best: { accountId: string; line: AccountLine; waiter: Waiter; backfill: Backfill; key: number[] } | undefined;
    const previewSlotFree = this.#activePreviews < this.limits.previewSlots;
    for (const [accountId, line] of this.#accounts) {
      if (line.waiting.length === 0) continue;
      const atCap = line.active >= this.limits.accountSlots;
      const waiter = atCap
        ? line.waiting.find((w) => w.kind === 'document')
        : line.waiting.find((w) => w.kind === 'document') ?? (previewSlotFree ? line.waiting[0] : undefined);
      if (!waiter) continue;
      const backfill = atCap ? this.#mayBackfill(accountId, waiter) : false;
      if (atCap && !backfill) continue;
      // Backfills only take what no render within its account's cap may take.
      const key = [backfill ? 1 : 0, this.budget?.isOverBudget(accountId) ? 1 : 0, waiter.kind === 'preview' ? 1 : 0, line.active, line.lastGrant, waiter.seq];
      if (!best || isBefore(key, best.key)) best = { accountId, line, waiter, backfill, key };
    }
    return best;
  }

  /**
   * May a document of an account at its cap take a free slot: `short` when its key's last renders were
   * all within `backfillMs` (the others wait for it, briefly), `lent` when the account is alone and
   * they were within `aloneBackfillMs` (taken back when another account needs it), or not at all.
   * Never for previews, nor for an account over its failure budget.
   */
  #mayBackfill(accountId: string, waiter: Waiter): Backfill {
    const { backfillMs, aloneBackfillMs } = this.limits;
    if (waiter.kind !== 'document' || waiter.costKey === undefined) return false;
    if (this.budget?.isOverBudget(accountId)) return false;
    const durations = this.#durations.get(durationKey(accountId, waiter.costKey)) ?? [];
    const within = (boundMs: number, samples: number) => boundMs > 0 && durations.length >= samples && durations.every((ms) => ms <= boundMs);
    if (within(backfillMs, BACKFILL_MIN_SAMPLES)) return 'short';
    if (aloneBackfillMs > 0 && within(aloneBackfillMs, ALONE_BACKFILL_MIN_SAMPLES) && this.#isAlone(accountId)) return 'lent';
    return false;
  }

  /** No other account asked for a render within `aloneWindowMs`, and none is rendering or waiting. */
  #isAlone(accountId: string): boolean {
    this.#pruneSeen();
    const others = this.#lastSeen.size - (this.#lastSeen.has(accountId) ? 1 : 0);
    const busyOthers = this.#accounts.size - (this.#accounts.has(accountId) ? 1 : 0);
    return others === 0 && busyOthers === 0;
  }

  #seen(accountId: string): void {
    this.#lastSeen.delete(accountId); // re-inserted: Map order is recency, so pruning stops at the first recent one
    this.#lastSeen.set(accountId, this.now());
    this.#pruneSeen();
  }

  #pruneSeen(): void {
    const oldest = this.now() - this.limits.aloneWindowMs;
    for (const [accountId, at] of this.#lastSeen) {
      if (at >= oldest) return;
      this.#lastSeen.delete(accountId);
    }
  }

  #recordDuration(accountId: string, costKey: string, ms: number): void {
    const key = durationKey(accountId, costKey);
    const durations = this.#durations.get(key) ?? [];
    this.#durations.delete(key); // re-inserted below: Map order is recency
    durations.push(ms);
    if (durations.length > BACKFILL_HISTORY) durations.shift();
    this.#durations.set(key, durations);
    if (this.#durations.size > BACKFILL_KEYS) this.#durations.delete(this.#durations.keys().next().value!);
  }

  #releaser(accountId: string, line: AccountLine, waiter: Waiter, lent: boolean): Release {
    let released = false;
    const grantedAt = this.now();
    const loan = lent ? new AbortController() : undefined;
    if (loan) this.#loans.add(loan);
    const release = (outcome?: { completed: boolean }) => {
      if (released) return;
      released = true;
      const heldMs = this.now() - grantedAt;
      const reclaimed = loan?.signal.aborted === true;
      if (loan) {
        this.#loans.delete(loan);
        if (this.#reclaiming === loan) this.#reclaiming = undefined;
      }
      if (waiter.kind === 'document' && waiter.costKey !== undefined && !(reclaimed && !outcome?.completed)) {
        // A delivered document tells how long its kind takes; a failure only that it is not short,
        // under either bound, once it held the slot longer than the shorter one.
        if (outcome?.completed) this.#recordDuration(accountId, waiter.costKey, heldMs);
        else if (heldMs > this.#shortestBoundMs) this.#recordDuration(accountId, waiter.costKey, Number.POSITIVE_INFINITY);
      }
      line.active -= 1;
      this.#active -= 1;
      if (waiter.kind === 'preview') this.#activePreviews -= 1;
      this.#forgetIdle(accountId, line);
      this.#dispatch();
    };
    return Object.assign(release, { reclaimed: loan?.signal });
  }

  #line(accountId: string): AccountLine {
    let line = this.#accounts.get(accountId);
    if (!line) {
      line = { active: 0, waiting: [], lastGrant: 0 };
      this.#accounts.set(accountId, line);
    }
    return line;
  }

  #remove(accountId: string, waiter: Waiter): void {
    const line = this.#accounts.get(accountId);
    const index = line?.waiting.indexOf(waiter) ?? -1;
    if (!line || index < 0) return;
    line.waiting.splice(index, 1);
    this.#waiting -= 1;
    this.#forgetIdle(accountId, line);
    // A departure can unblock nobody (slots are not freed), but keeps the map small.
  }

  /** Drops an account with nothing running or waiting, so the map holds only busy accounts. */
  #forgetIdle(accountId: string, line: AccountLine): void {
    if (line.active === 0 && line.waiting.length === 0 && this.#accounts.get(accountId) === line) this.#accounts.delete(accountId);
  }
}

function durationKey(accountId: string, costKey: string): string {
  return `${accountId}\u0000${costKey}`;
}

/** Lexicographic comparison of two fair-order keys. */
function isBefore(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

function busy(reason: string): AppError {
  return new AppError('RENDERER_BUSY', 'The renderer is busy; retry shortly', { details: { retryAfterSeconds: 2, reason } });
}

function accountLimited(reason: string): AppError {
  return new AppError('RATE_LIMITED', `Too many renders of this account are waiting: ${reason}. Retry after 2 s.`, { details: { retryAfterSeconds: 2, reason } });
}
