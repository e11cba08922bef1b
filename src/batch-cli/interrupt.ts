/**
 * Ctrl-C while a batch runs: the first SIGINT asks the command to cancel the batch and wind up (it
 * still downloads what was delivered and says so); a second one quits at once. A sleep between polls
 * ends early on the first, so the cancel's effect is seen without waiting a whole poll.
 */

export interface Interrupt {
  readonly requested: boolean;
  /** Runs `listener` on the first SIGINT (at once if it already came). */
  onFirst(listener: () => void): void;
  /** Waits `ms`, or less if the first SIGINT comes meanwhile. */
  sleep(ms: number): Promise<void>;
  /** Removes the handler (Node's default Ctrl-C again). */
  dispose(): void;
}

/** Takes over SIGINT until `dispose()`; `quitNow` runs on the second one. */
export function watchInterrupt(quitNow: () => void): Interrupt {
  let requested = false;
  const listeners: (() => void)[] = [];
  const wakers = new Set<() => void>();
  const handler = () => {
    if (requested) return quitNow();
    requested = true;
    for (const wake of wakers) wake();
    for (const listener of listeners) listener();
  };
  process.on('SIGINT', handler);
  return {
    get requested() {
      return requested;
    },
    onFirst(listener) {
      if (requested) listener();
      else listeners.push(listener);
    },
    sleep(ms) {
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        wakers.add(wake);
      });
    },
    dispose() {
      process.off('SIGINT', handler);
    },
  };
}
