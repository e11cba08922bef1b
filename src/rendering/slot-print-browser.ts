/**
 * A render slot's own print browser (`PRESSROOM_PRINT_BROWSERS=per-slot`): a Chromium run with
 * `--single-process`, in which the slot's print page lives, for documents without scripts.
 *
 * Why: Chromium starts a print compositor utility process for every `Page.printToPDF` and ends it
 * afterwards; on a short document that process costs as much CPU as the rest of the print (a one-line
 * page 12 ms, the peers' invoice 17 of its 55 ms untagged; `bench/print-process-cost.ts`). In a
 * single-process browser the compositor is a thread. One such browser per slot, not one for all: a
 * single-process browser has one renderer thread for all its pages, so two slots sharing one would
 * lay out one document at a time.
 *
 * What changes for a document printed here, and how each is kept to its slot:
 *  - memory: the whole browser is the document process; past `rendererMemoryMb` the watch kills it
 *    (`killedSince` tells the renderer the document was too large), and the next render launches a
 *    new one;
 *  - a crash ends this browser only: the render on it fails as a crashed page would, the page is
 *    marked lost, and the slot opens a new page on a new browser;
 *  - the sandbox: a single-process browser has none, so config allows this mode only where Chromium
 *    runs without it anyway (as root);
 *  - its lapses: Chromium 156 with `--single-process` stops answering `Page.printToPDF` for good some
 *    three minutes after it started, busy or idle (plain puppeteer, 2026-11-27: the first print that
 *    hung came 170–245 s after the launch, whether the browser printed without pause, every 10 s, or
 *    after 100 s idle; first taken for a lapse after idling). So a browser is used for at most
 *    `maxAgeMs`: once older, it is closed as its slot is given back and the next document launches a
 *    new one; a browser idle for `idleCloseMs` is closed as well (its memory back); a print page
 *    that was lost (a print that timed out, or any failed render on it) is replaced on a new browser,
 *    never on the one it was lost in; and, for a lapse that comes sooner than measured, a document
 *    not printed within its allowance (`stallMs` plus PRINT_STALL_MS_PER_HTML_CHAR per character of
 *    HTML) is taken for one: the browser is killed and the document printed again on a new one.
 * Documents with scripts, images and template evaluation stay on the multi-process browser
 * (`browser-generation.ts`): they need browser contexts of their own, which a single-process browser
 * does not support. So do documents longer than about two pages (`print-routing.ts`), which print
 * faster there.
 */
import type { Logger } from '../shared/log.js';
import type { ClosedRoomOptions } from './chromium/closed-room.js';
import { launchChromium, type LaunchedChromium } from './chromium/launch-chromium.js';
import { PrintPage } from './chromium/print-page.js';
import { ProcessMemoryWatch } from './chromium/process-memory-watch.js';

/** When a slot's print browser is closed or killed (see the file comment); from config's `printBrowser…Ms`. */
export type SlotPrintBrowserTimings = Pick<SlotPrintBrowserOptions, 'idleCloseMs' | 'maxAgeMs' | 'stallMs'>;

export interface SlotPrintBrowserOptions {
  executablePath: string;
  sinkholePort: number;
  protocolTimeoutMs: number;
  /** The browser is killed past this many MB (resident): it is the document process. */
  rendererMemoryMb: number;
  /** Closed after this long without a render on its slot (see the file comment). */
  idleCloseMs: number;
  /** Closed once this old when its slot is given back: it stops printing some three minutes after its launch (see the file comment). */
  maxAgeMs: number;
  /** Killed when a print has not answered after this, plus PRINT_STALL_MS_PER_HTML_CHAR per character of its HTML (see the file comment). */
  stallMs: number;
  logger: Logger;
  /** Counts a launch (the supervisor's `printBrowserLaunches`), and an end nobody asked for (`crashes`; not a memory kill). */
  onLaunched: () => void;
  onLost: () => void;
  /** Counts a browser killed for a print that did not answer (`printBrowserStalls`; not a crash). */
  onStalled: () => void;
}

/**
 * A print's allowance beyond `stallMs` for each character of its HTML: 40 µs. Documents printed here
 * have at most 32 Ki characters of markup (`print-routing.ts`: 1.3 s more), but their `data:` URIs
 * count too — a large embedded image takes longer to decode (1 Mi characters: 42 s more). Chosen when
 * the 33-page report (550 K characters, ~9 s tagged at concurrency 2 on the slowest machine measured)
 * still printed here, against an allowance of 42 s.
 */
export const PRINT_STALL_MS_PER_HTML_CHAR = 0.04;

/** How often the memory watch reads /proc while the slot renders (as the shared browser's watch). */
const MEMORY_POLL_MS = 250;

export class SlotPrintBrowser {
  #chromium: LaunchedChromium | undefined;
  /** When the current browser was launched (performance.now()). */
  #launchedAt = 0;
  /** The print page opened in the current browser: marked lost the moment the browser is closed. */
  #page: PrintPage | undefined;
  /** Launches under way and browsers retired for idleness or age, still shutting down: `close()` waits for them. */
  readonly #inFlight = new Set<Promise<unknown>>();
  /** Browsers killed for a print that did not answer: their end is a stall, not a crash. */
  readonly #stalled = new WeakSet<LaunchedChromium>();
  #watch: ProcessMemoryWatch | undefined;
  #releaseWatch: (() => void) | undefined;
  /** Renders on this slot holding the memory watch (one at a time; a count, like the watch's own). */
  #watchers = 0;
  /** When the memory watch killed this slot's browser (performance.now()). */
  #killedAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  /** Closes the browser once its slot has been idle for `idleCloseMs`; armed when a render gives the slot back. */
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SlotPrintBrowserOptions) {}

  /**
   * A new print page, on a new browser: the slot asks for one when it has none yet or its page was
   * lost, and a lost page may have been lost to a browser that no longer prints (see the file comment).
   */
  async openPrintPage(room: ClosedRoomOptions, signal: AbortSignal): Promise<PrintPage> {
    if (this.#closed) throw new Error('the slot print browser is closed');
    // Not closed for idleness while its page opens.
    clearTimeout(this.#idleTimer);
    const chromium = await this.#launch(signal);
    const page = await PrintPage.open(chromium.root, room, signal, { crashesWithBrowser: true, guardPrint: (chars) => this.#guardPrint(chromium, chars) });
    if (this.#closed || chromium !== this.#chromium) {
      await page.close();
      throw new Error('the slot print browser ended while its page opened');
    }
    this.#page = page;
    // Opened with no render on the slot (at warm-up, or replacing a lost page after a render): idle from
    // now, so it too is closed before it can stop printing.
    if (this.#watchers === 0) this.#armIdleClose();
    return page;
  }

  /**
   * Watches this browser's memory while a render holds the slot (also across a relaunch during it);
   * call the result when the render is done. Idle, nothing polls /proc.
   */
  watch(): () => void {
    this.#watchers += 1;
    clearTimeout(this.#idleTimer);
    this.#releaseWatch ??= this.#watch?.hold();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#watchers -= 1;
      if (this.#watchers > 0) return;
      this.#releaseWatch?.();
      this.#releaseWatch = undefined;
      // Busy since before its age ran out: closed now, before the slot's next render can take it.
      if (this.#ageLeftMs() <= 0) this.#retire('at its age');
      else this.#armIdleClose();
    };
  }

  /** Closes the browser when the slot stays idle for `idleCloseMs`, or sooner if it reaches `maxAgeMs` meanwhile. */
  #armIdleClose(): void {
    clearTimeout(this.#idleTimer);
    if (this.#closed || !this.#chromium) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#watchers === 0 && !this.#closed) this.#retire('idle or at its age');
    }, Math.max(0, Math.min(this.options.idleCloseMs, this.#ageLeftMs())));
    this.#idleTimer.unref();
  }

  #ageLeftMs(): number {
    return this.options.maxAgeMs - (performance.now() - this.#launchedAt);
  }

  /**
   * Closes the browser for idleness or age. Its page is lost at once, not when the connection closes:
   * a render taking the slot meanwhile opens a new page (on a new browser) rather than print on one
   * that is shutting down.
   */
  #retire(why: string): void {
    this.options.logger.debug({ pid: this.#chromium?.pid }, `slot print browser ${why}: closed`);
    void this.#page?.close();
    this.#track(this.#end());
  }

  #track(work: Promise<unknown>): void {
    this.#inFlight.add(work);
    const done = () => this.#inFlight.delete(work);
    work.then(done, done);
  }

  /**
   * Watches one print on `chromium`: if it has not answered within its allowance, the browser is taken
   * for one that stopped printing (see the file comment) and killed. Its page is lost with it, as in a
   * crash, so the render prints again on a new browser (once, `pdf-renderer.ts`); counted as a stall,
   * not a crash.
   */
  #guardPrint(chromium: LaunchedChromium, htmlChars: number): () => void {
    const allowanceMs = Math.round(this.options.stallMs + htmlChars * PRINT_STALL_MS_PER_HTML_CHAR);
    const timer = setTimeout(() => {
      if (chromium !== this.#chromium || this.#closed) return;
      this.options.logger.warn({ pid: chromium.pid, allowanceMs, htmlChars }, 'a slot print browser did not answer a print in time: killed; the document is printed again on a new one');
      this.#stalled.add(chromium);
      this.options.onStalled();
      // SIGKILL, not a graceful close: a browser that stopped printing may not close either. The
      // connection then closes, and the page is lost as a crashed one (`crashesWithBrowser`).
      void chromium.kill();
    }, allowanceMs);
    timer.unref();
    return () => clearTimeout(timer);
  }

  /** True when the memory watch killed this slot's browser after `sinceMs` (performance.now()). */
  killedSince(sinceMs: number): boolean {
    return this.#killedAt >= sinceMs;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    await Promise.allSettled([this.#end(), ...this.#inFlight]);
  }

  /** Launches a new browser for this slot (tracked, so `close()` waits for one still starting). */
  #launch(signal: AbortSignal): Promise<LaunchedChromium> {
    const launching = this.#launchNew(signal);
    this.#track(launching);
    return launching;
  }

  async #launchNew(signal: AbortSignal): Promise<LaunchedChromium> {
    await this.#end();
    const chromium = await launchChromium({
      executablePath: this.options.executablePath,
      sinkholePort: this.options.sinkholePort,
      protocolTimeoutMs: this.options.protocolTimeoutMs,
      signal,
      logger: this.options.logger,
      singleProcess: true,
    });
    if (this.#closed) {
      await chromium.shutdown();
      throw new Error('the slot print browser is closed');
    }
    this.#chromium = chromium;
    this.#launchedAt = performance.now();
    this.options.onLaunched();
    let killedByWatch = false;
    if (chromium.pid !== undefined) {
      this.#watch = new ProcessMemoryWatch({
        rootPid: chromium.pid,
        rootIsDocumentProcess: true,
        limitBytes: this.options.rendererMemoryMb * 1024 * 1024,
        intervalMs: MEMORY_POLL_MS,
        logger: this.options.logger,
        onKilled: () => {
          killedByWatch = true;
          this.#killedAt = performance.now();
        },
      });
      if (this.#watchers > 0) this.#releaseWatch = this.#watch.hold();
    }
    chromium.browser.once('disconnected', () => {
      if (this.#chromium !== chromium) return;
      // A memory kill is the document's bound (logged by the watch), not a crash.
      if (!this.#closed && !killedByWatch && !this.#stalled.has(chromium)) {
        this.options.logger.warn({ pid: chromium.pid }, 'a slot print browser ended (crashed or killed from outside); its slot opens a new one');
        this.options.onLost();
      }
      // Its page was marked crashed as the connection closed (`crashesWithBrowser`): the render on it
      // fails as on a crashed page, and the slot replaces the page, and so the browser.
      void this.#end();
    });
    this.options.logger.debug({ pid: chromium.pid }, 'slot print browser started');
    return chromium;
  }

  async #end(): Promise<void> {
    const chromium = this.#chromium;
    this.#chromium = undefined;
    this.#page = undefined;
    this.#releaseWatch?.();
    this.#watch?.stop();
    this.#releaseWatch = undefined;
    this.#watch = undefined;
    await chromium?.shutdown();
  }
}
