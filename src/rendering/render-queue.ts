/**
 * A counting semaphore with a bounded, time-limited wait line: `capacity` renders run at once,
 * up to `queueLimit` more wait (first come, first served), and anything beyond — or waiting longer
 * than `maxWaitMs` — is refused with RENDERER_BUSY (the HTTP layer answers 503 + Retry-After)
 * instead of piling up.
 */
import { AppError } from '../shared/errors.js';

interface Waiter {
  grant: () => void;
  refuse: (error: unknown) => void;
}

/** Releases a permit; calling it more than once is harmless. */
export type Release = () => void;

export class RenderQueue {
  #active = 0;
  readonly #waiters: Waiter[] = [];

  constructor(
    private readonly capacity: number,
    private readonly queueLimit: number,
  ) {}

  /** Renders holding a permit. */
  get active(): number {
    return this.#active;
  }

  /** Renders waiting for a permit. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Waits for a permit; rejects with RENDERER_BUSY when the line is full or the wait too long. */
  acquire(maxWaitMs: number, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#active < this.capacity) {
      this.#active += 1;
      return Promise.resolve(this.#releaser());
    }
    if (this.#waiters.length >= this.queueLimit) {
      return Promise.reject(busy(`all ${this.capacity} render slots are busy and ${this.queueLimit} documents are already waiting`));
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          cleanup();
          resolve(this.#releaser());
        },
        refuse: (error) => {
          cleanup();
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.#remove(waiter);
        waiter.refuse(busy(`no render slot became free within ${maxWaitMs} ms`));
      }, maxWaitMs);
      const onAbort = () => {
        this.#remove(waiter);
        waiter.refuse(signal!.reason);
      };
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Refuses everyone waiting (shutdown). */
  refuseAll(error: unknown): void {
    for (const waiter of this.#waiters.splice(0)) waiter.refuse(error);
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      // The permit passes straight to the next waiter, so `active` stays the same.
      if (next) next.grant();
      else this.#active -= 1;
    };
  }

  #remove(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index >= 0) this.#waiters.splice(index, 1);
  }
}

function busy(reason: string): AppError {
  return new AppError('RENDERER_BUSY', 'The renderer is busy; retry shortly', { details: { retryAfterSeconds: 2, reason } });
}
