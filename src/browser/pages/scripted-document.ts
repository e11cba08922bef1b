/**
 * Waiting for a scripted document (one with `<script>`, on a single-use page) before it is printed
 * or captured, whatever its scripts do to their own page.
 *
 * A script may navigate its page: `location.href = …`, `location.reload()`, a form, `window.stop()`.
 * The closed room refuses every navigation that needs a request, but merely starting one cuts the
 * document's own loading short (Chromium aborts it, as `window.stop()` does): the document is
 * complete without ever firing its load event. Waiting for that event hung such a render until its
 * deadline (RENDER_TIMEOUT, issue 12: a CI run failed on it when a slow machine let the script's
 * navigation start before the load). So the wait is on `document.readyState` reaching `complete`,
 * which happens either way. A navigation that needs no request (about:blank, a `blob:` URL) commits
 * and replaces the document: that is refused with a template error rather than printed blank. And
 * printing while a refused navigation is still on its way can fail (`Printing failed`): the print is
 * tried once more after the navigation has ended.
 */
import type { CDPSession, Protocol } from 'puppeteer-core';
import { AppError } from '../../shared/errors.js';
import { raceSignal } from '../cdp-helpers.js';
import { RENDER_ORIGIN } from './closed-room.js';

/** Follows the main frame of one scripted document from before it is written until it is printed. */
export class ScriptedDocumentWatch {
  /** Navigations of the frame started and not yet ended (failed, or committed). */
  #pending = 0;
  /** Navigations started so far; a step that fails while this moved may be retried. */
  #started = 0;
  #replacedBy: string | undefined;
  #ended: (() => void)[] = [];
  #replaced = new AbortController();

  readonly #onStarted = (event: Protocol.Page.FrameStartedNavigatingEvent) => {
    if (event.frameId !== this.frameId) return;
    this.#pending += 1;
    this.#started += 1;
  };
  readonly #onStopped = (event: Protocol.Page.FrameStoppedLoadingEvent) => {
    if (event.frameId === this.frameId) this.#settle();
  };
  readonly #onNavigated = (event: Protocol.Page.FrameNavigatedEvent) => {
    if (event.frame.id !== this.frameId) return;
    this.#replacedBy = event.frame.url;
    this.#replaced.abort(this.#replacedError());
    this.#settle();
  };

  private constructor(
    private readonly session: CDPSession,
    private readonly frameId: string,
  ) {
    session.on('Page.frameStartedNavigating', this.#onStarted);
    session.on('Page.frameStoppedLoading', this.#onStopped);
    session.on('Page.frameNavigated', this.#onNavigated);
  }

  /** Starts following `frameId`; call before the document is written, and `stop()` when done. */
  static start(session: CDPSession, frameId: string): ScriptedDocumentWatch {
    return new ScriptedDocumentWatch(session, frameId);
  }

  /**
   * Resolves once the document is complete — loaded, or its loading cut short by its own scripts —
   * and the promise it may have set as `window.pressroomReady` has settled (charts that draw
   * asynchronously). Rejects with TEMPLATE_RENDER_ERROR when the document was replaced meanwhile.
   */
  async ready(signal: AbortSignal): Promise<void> {
    const all = AbortSignal.any([signal, this.#replaced.signal]);
    try {
      await raceSignal(
        this.session.send('Runtime.evaluate', { expression: DOCUMENT_SETTLED, awaitPromise: true }),
        all,
      );
    } catch (error) {
      // A committed navigation destroys the context the evaluation ran in ("Inspected target
      // navigated or closed"), and that answer may come before the frameNavigated event: ask.
      if (!signal.aborted) await this.#readFrameUrl(signal);
      this.assertPresent();
      throw error;
    }
    this.assertPresent();
  }

  /**
   * Runs `step` (the print or the capture). When it fails while a navigation the document started
   * is, or was meanwhile, under way, waits for that navigation to end and runs it once more.
   */
  async run<T>(step: () => Promise<T>, signal: AbortSignal): Promise<T> {
    await this.#navigationsEnded(signal);
    const before = this.#started;
    let result: T;
    try {
      result = await step();
    } catch (error) {
      if (signal.aborted || (this.#started === before && this.#pending === 0)) throw error;
      await this.#navigationsEnded(signal);
      await this.#readFrameUrl(signal);
      this.assertPresent();
      result = await step();
    }
    this.assertPresent();
    return result;
  }

  /** Throws TEMPLATE_RENDER_ERROR when a navigation replaced the document. */
  assertPresent(): void {
    if (this.#replacedBy !== undefined) throw this.#replacedError();
  }

  stop(): void {
    this.session.off('Page.frameStartedNavigating', this.#onStarted);
    this.session.off('Page.frameStoppedLoading', this.#onStopped);
    this.session.off('Page.frameNavigated', this.#onNavigated);
    this.#settle();
  }

  /** Records the frame's document as replaced when its URL is no longer at RENDER_ORIGIN. */
  async #readFrameUrl(signal: AbortSignal): Promise<void> {
    const tree = await raceSignal(this.session.send('Page.getFrameTree'), signal).catch(() => undefined);
    const url = tree?.frameTree.frame.url;
    if (url !== undefined && !url.startsWith(`${RENDER_ORIGIN}/`)) this.#replacedBy ??= url;
  }

  #navigationsEnded(signal: AbortSignal): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return raceSignal(new Promise<void>((resolve) => this.#ended.push(resolve)), signal);
  }

  #settle(): void {
    this.#pending = 0;
    const waiters = this.#ended;
    this.#ended = [];
    for (const resolve of waiters) resolve();
  }

  #replacedError(): AppError {
    const to = (this.#replacedBy ?? '').slice(0, 100) || 'another page';
    return new AppError(
      'TEMPLATE_RENDER_ERROR',
      `The document's script navigated its page away (to ${to}) before it was printed. Pressroom prints the document it is given: remove the navigation (location, reload, window.open in the same tab).`,
    );
  }
}

interface BrowserWindow {
  document: { readyState: string };
  pressroomReady?: unknown;
  setTimeout(callback: () => void, ms: number): unknown;
}

/**
 * Runs in the page: settles once the document is complete and `window.pressroomReady`, if set, has
 * settled. Polled rather than an event listened for: `window.stop()` completes a document without
 * any event, and the state is read afresh each time.
 */
function documentSettled(): Promise<boolean> {
  const g = globalThis as unknown as BrowserWindow;
  return new Promise<void>((resolve) => {
    const check = (): void => {
      if (g.document.readyState === 'complete') resolve();
      else g.setTimeout(check, 20);
    };
    check();
  })
    .then(() => g.pressroomReady)
    .then(
      () => true,
      () => true,
    );
}

/** `documentSettled` as sent to the page (tsx's keepNames `__name` helper provided, as in image-pixels.ts). */
const DOCUMENT_SETTLED = `(() => { const __name = (f) => f; return (${documentSettled.toString()})(); })()`;
