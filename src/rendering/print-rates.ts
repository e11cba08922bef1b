/**
 * What printing costs per page on this installation, for the early refusal of a synchronous request
 * (sync-estimate.ts). A figure measured on one machine is wrong on the next (machines of one kind
 * differ up to 4× in Chromium's speed), so the estimate uses the fastest rate this process has seen:
 * printing only (after layout), of a document long enough for its pages to outweigh the print's fixed
 * cost. Until such a document was printed, the fixed starting figure (`PRINT_MS_PER_PAGE`) stands in.
 * The fastest, not the latest: a loaded moment must not make the estimate refuse what a quiet one prints.
 */
export class PrintRates {
  readonly #seen: { tagged?: number; untagged?: number } = {};

  constructor(private readonly startingFigure: { readonly tagged: number; readonly untagged: number }) {}

  /** Milliseconds per page to estimate with; 0 turns the estimate off. */
  perPage(tagged: boolean): number {
    const key = tagged ? 'tagged' : 'untagged';
    if (this.startingFigure[key] <= 0) return 0;
    return this.#seen[key] ?? this.startingFigure[key];
  }

  /** One print: how long it took after layout, and its pages. */
  observe(tagged: boolean, printMs: number, pages: number): void {
    if (pages < MIN_PAGES || !(printMs > 0)) return;
    const key = tagged ? 'tagged' : 'untagged';
    const rate = printMs / pages;
    this.#seen[key] = Math.min(this.#seen[key] ?? Number.POSITIVE_INFINITY, rate);
  }
}

/** Below this many pages a print's fixed cost (opening the stream, the first page) outweighs its pages. */
const MIN_PAGES = 10;
