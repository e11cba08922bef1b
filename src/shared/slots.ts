/** A FIFO counting semaphore for child processes (Ghostscript, qpdf): callers beyond the limit wait their turn. */
export class Slots {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  /** Runs `task` once a slot is free, and frees it (or hands it to the next caller) when the task ends. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next(); // hand the slot over without releasing it
      else this.active--;
    }
  }
}
