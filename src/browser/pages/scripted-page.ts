/**
 * Pages for documents that opt into JavaScript (they contain a `<script>`). Each one lives in its
 * own browser context — own storage, cookies, cache and renderer process — takes exactly one
 * document and is then disposed, which kills its renderer: its scripts, timers and stored data
 * cannot outlive the document or meet another one.
 *
 * Opening a context and its first page takes most of a second (a renderer process starts and initialises),
 * so the pool keeps one spare, opened (and warmed up with a print of our own document) in the
 * background right after the previous one is taken — the same pattern as the evaluator's workers.
 * A spare has only ever held our own documents. It saves most of that per scripted document (figures:
 * docs/performance-log/2026-11-22-to-28-service.md).
 *
 * A scripted document cannot be sandboxed against `<meta http-equiv="refresh">` the way the
 * script-less print page is (Chromium allows a refresh wherever scripts are allowed), so such tags
 * are disarmed in the source before it is loaded: a refresh would navigate the page while it is
 * printed (`Printing failed`) or to about:blank (a blank PDF). A script can still navigate its own
 * page; that reaches only this single-use page and its one document, and `scripted-document.ts`
 * makes sure it neither hangs the render nor prints another document.
 */
import type { CDPSession } from 'puppeteer-core';
import { raceSignal, type StreamedBytes } from '../cdp-helpers.js';
import type { ClosedRoom, ClosedRoomOptions, DocumentResources } from './closed-room.js';
import { PageTarget } from '../page-target.js';
import { loadAndPrint, openBlankDocument, type PrintBounds, type PrintParams } from './print-page.js';

const OPEN_TIMEOUT_MS = 20_000;
const WARM_UP_HTML =
  '<h1 style="font-family:sans-serif">Warm-up</h1><p style="font-family:serif">text <b>bold</b> <i>italic</i></p><pre>mono</pre>';
const WARM_UP_PARAMS: PrintParams = { printBackground: true, generateTaggedPDF: true, generateDocumentOutline: true };

/** A single-use page in a throwaway browser context. */
export class ScriptedPage {
  #used = false;

  private constructor(
    private readonly root: CDPSession,
    private readonly browserContextId: string,
    private readonly target: PageTarget,
    private readonly frameId: string,
    private readonly room: ClosedRoom,
  ) {}

  /** Creates the context and page and loads the blank document (scripts enabled). */
  static async open(root: CDPSession, room: ClosedRoomOptions): Promise<ScriptedPage> {
    const signal = AbortSignal.timeout(OPEN_TIMEOUT_MS);
    const { browserContextId } = await raceSignal(
      root.send('Target.createBrowserContext', { disposeOnDetach: true }),
      signal,
    );
    try {
      // Its own context gets its own window, so the page is visible: requestAnimationFrame runs.
      const target = await raceSignal(PageTarget.open(root, { browserContextId }), signal);
      const { frameId, closedRoom } = await openBlankDocument(
        target,
        room,
        { scripts: true },
        AbortSignal.any([signal, target.lost]),
      );
      // A first print in a new renderer is slow (fonts, PDF and tagging code cold): pay that here,
      // in the background, with our own document. It is replaced by the real one.
      await loadAndPrint(target, frameId, WARM_UP_HTML, WARM_UP_PARAMS, signal, { scripted: false });
      return new ScriptedPage(root, browserContextId, target, frameId, closedRoom);
    } catch (error) {
      root.send('Target.disposeBrowserContext', { browserContextId }).catch(() => {});
      throw error;
    }
  }

  /** True when the page can still take its one document. */
  get isUsable(): boolean {
    return !this.#used && !this.target.isLost;
  }

  /** Prints `html` (its scripts run) within `bounds`, then disposes the context whatever happened. */
  async print(
    html: string,
    params: PrintParams,
    bounds: PrintBounds,
    signal: AbortSignal,
    resources?: DocumentResources,
  ): Promise<StreamedBytes> {
    this.#used = true;
    this.room.resources = resources;
    try {
      resources?.review?.(html);
      return await loadAndPrint(this.target, this.frameId, disarmMetaRefresh(html), params, signal, {
        scripted: true,
        bounds,
        resources,
      });
    } finally {
      this.dispose();
    }
  }

  /** Closes the page and kills its renderer; the context's storage is discarded. Never throws. */
  dispose(): void {
    this.#used = true;
    this.target.markLost('abandoned');
    this.root.send('Target.disposeBrowserContext', { browserContextId: this.browserContextId }).catch(() => {});
  }
}

/** A `<meta …>` start tag; quoted attribute values may contain `>`. */
const META_TAG = /<meta(?=[\s/>])(?:[^>"']|"[^"]*"|'[^']*')*>/gi;
/** Its `http-equiv` attribute when the value is `refresh` (in any case, quoted or not). */
const HTTP_EQUIV_REFRESH = /([\s/])http-equiv(?=\s*=\s*(?:"\s*refresh\s*"|'\s*refresh\s*'|refresh(?=[\s/>])))/gi;

/**
 * Renames `http-equiv="refresh"` on meta tags so that Chromium ignores them (the tag stays, inert).
 * Other `http-equiv` values (content-language, which drives hyphenation; content-type) keep working.
 */
export function disarmMetaRefresh(html: string): string {
  if (!/http-equiv/i.test(html)) return html;
  return html.replace(META_TAG, (tag) => tag.replace(HTTP_EQUIV_REFRESH, '$1data-refused-http-equiv'));
}
