/**
 * One unit of render concurrency: an evaluator page (templates) and a print page (PDF), both
 * reused. A page that crashed, timed out or was left with a command in flight is never reused: it
 * is closed and a new one opened in the background, and the next render on this slot waits for it.
 */
import type { CDPSession } from 'puppeteer-core';
import { raceSignal } from './cdp-helpers.js';
import type { ClosedRoomOptions } from './pages/closed-room.js';
import { PrintPage } from './pages/print-page.js';
import { EvaluatorPage } from './sandbox/evaluator-page.js';

const OPEN_TIMEOUT_MS = 20_000;

/** Evaluator + print page pair, owned by one browser generation. */
export class PageSlot {
  #evaluator: EvaluatorPage | undefined;
  #printer: PrintPage | undefined;
  #opening: Promise<void> | undefined;

  constructor(
    private readonly root: CDPSession,
    private readonly room: ClosedRoomOptions,
    private readonly onReplaced: () => void,
  ) {}

  /** Resolves when both pages are usable, opening whatever is missing (or rejects with `signal`). */
  async ready(signal: AbortSignal): Promise<{ evaluator: EvaluatorPage; printer: PrintPage }> {
    let failedOpenings = 0;
    for (;;) {
      if (!this.#opening && !this.#usable()) this.#startOpening();
      if (this.#opening) {
        try {
          await raceSignal(this.#opening, signal);
        } catch (error) {
          // A new page can land on a renderer process that has just died (Chromium's spare renderer,
          // killed from outside): it never answers and is given up at its deadline. One more opening
          // gets a fresh process; a second failure is the render's.
          if (signal.aborted || ++failedOpenings > 1) throw error;
        }
      }
      if (this.#usable()) return { evaluator: this.#evaluator!, printer: this.#printer! };
    }
  }

  /** The slot's print page, for a document without scripts (call after `ready()`). */
  printPage(): PrintPage {
    if (!this.#printer) throw new Error('the slot has no print page: ready() first');
    return this.#printer;
  }

  /** After a render: replaces lost pages in the background so the next render finds them ready. */
  repairInBackground(): void {
    if (this.#opening || this.#usable()) return;
    this.onReplaced();
    // A failure here is retried by the next ready().
    this.#startOpening().catch(() => {});
  }

  /** Closes its pages. */
  async close(): Promise<void> {
    await Promise.all([this.#evaluator?.close(), this.#printer?.close()]);
    this.#evaluator = undefined;
    this.#printer = undefined;
  }

  #usable(): boolean {
    return (
      this.#evaluator !== undefined && !this.#evaluator.isLost && this.#printer !== undefined && !this.#printer.isLost
    );
  }

  /** Closes lost pages and opens replacements; one opening at a time, shared by all waiters. */
  #startOpening(): Promise<void> {
    if (this.#evaluator?.isLost) {
      void this.#evaluator.close();
      this.#evaluator = undefined;
    }
    if (this.#printer?.isLost) {
      void this.#printer.close();
      this.#printer = undefined;
    }
    const signal = AbortSignal.timeout(OPEN_TIMEOUT_MS);
    // allSettled: the opening ends only when both attempts have, so no late page is orphaned.
    this.#opening = Promise.allSettled([
      this.#evaluator ? undefined : EvaluatorPage.open(this.root, this.room).then((page) => (this.#evaluator = page)),
      this.#printer ? undefined : PrintPage.open(this.root, this.room, signal).then((page) => (this.#printer = page)),
    ])
      .then((results) => {
        for (const result of results) if (result.status === 'rejected') throw result.reason;
      })
      .finally(() => {
        this.#opening = undefined;
      });
    return this.#opening;
  }
}
