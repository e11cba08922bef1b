/**
 * The loop of every queue whose rows are the queue (jobs, webhook deliveries, a batch's assembly and
 * settling): claim as many due rows as there are free slots, run each, and claim again as soon as a slot
 * frees or a wake-up comes (a new row, a retry's time), else after the poll interval. Stopping stops the
 * claims at once and lets the runs in flight end, for at most a grace period; what is still running then
 * is the caller's to release. Written once (issue 51): the claim itself, and what a run does, are the
 * queue's own.
 */
import type { Logger } from './log.js';

export interface ClaimLoopOptions<Row> {
  /** What is claimed, in log lines ("jobs"). */
  readonly what: string;
  /** Rows run at once, at most. */
  readonly slots: number;
  /** Claims up to `limit` due rows under this process's lease. */
  claim(limit: number): Promise<Row[]>;
  /** Runs one claimed row; it records its own outcome (a rejection is only logged). */
  run(row: Row): Promise<void>;
  /** Wake-ups that mean a row may be due now. */
  readonly wakeups?: { subscribe(listener: () => void): () => void };
  readonly pollIntervalMs: number;
  readonly logger: Logger;
}

export interface ClaimLoop {
  start(): void;
  /** Claims again now (or once the claim under way has answered). */
  kick(): void;
  /** Rows running now. */
  readonly running: number;
  /** Stops claiming and waits for the runs in flight, at most `graceMs`: true when none is left. */
  stop(graceMs?: number): Promise<boolean>;
}

export function createClaimLoop<Row>(o: ClaimLoopOptions<Row>): ClaimLoop {
  const inFlight = new Set<Promise<void>>();
  let active = false;
  let wanted = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let unsubscribe: (() => void) | undefined;

  function kick(): void {
    wanted = true;
    wake?.();
  }

  function launch(row: Row): void {
    const task: Promise<void> = o
      .run(row)
      .catch((error) =>
        o.logger.error({ err: error }, `a run of claimed ${o.what} failed; its lease will run out and it is retried`),
      )
      .finally(() => {
        inFlight.delete(task);
        kick();
      });
    inFlight.add(task);
  }

  async function claimLoop(): Promise<void> {
    while (active) {
      wanted = false;
      const free = o.slots - inFlight.size;
      if (free > 0) {
        try {
          const claimed = await o.claim(free);
          for (const row of claimed) launch(row);
          if (claimed.length === free) continue; // there may be more
        } catch (error) {
          o.logger.warn({ err: error }, `could not claim ${o.what}; will retry`);
        }
      }
      if (wanted || !active) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, o.pollIntervalMs);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        }
        wake = done;
      });
    }
  }

  return {
    start() {
      if (active) return;
      active = true;
      unsubscribe = o.wakeups?.subscribe(kick);
      loop = claimLoop();
    },
    kick,
    get running() {
      return inFlight.size;
    },
    async stop(graceMs = Number.POSITIVE_INFINITY) {
      active = false;
      unsubscribe?.();
      wake?.();
      await loop;
      let timer: NodeJS.Timeout | undefined;
      const grace = Number.isFinite(graceMs) ? [new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))] : [];
      await Promise.race([Promise.allSettled([...inFlight]), ...grace]);
      clearTimeout(timer);
      return inFlight.size === 0;
    },
  };
}
