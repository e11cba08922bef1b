/**
 * Taking a picture of an HTML document: the image counterpart of `print-page.ts`.
 *
 * Each image is taken on a single-use page behind the same closed room as printing
 * (`openBlankDocument`: RENDER_ORIGIN, the same CSP, request interception), closed afterwards:
 *   - a document without `<script>`: a page in a window of its own in the default context, with
 *     JavaScript disabled and the script-less sandbox policy, exactly like the reused print page;
 *   - a document with `<script>` (charts): a page in its own throwaway browser context (which has its
 *     own window), scripts on, `<meta http-equiv="refresh">` disarmed and `window.pressroomReady`
 *     awaited, like `ScriptedPage` (`scripted-document.ts`).
 * Why a window of its own: a screenshot needs a page that is painted. On a hidden background tab
 * (how print pages are opened) `Page.captureScreenshot` hung now and then on a document whose image the
 * closed room had refused, never with a window of its own nor as the window's visible tab. The
 * visible-tab way is cheaper, but two captures at once would hide each other's tab, and closing the
 * tab would bring a print page to the front (painted for nothing). The price: a fraction of a second
 * more per image than a hidden tab (figures: docs/performance-log/2026-11-22-to-28-service.md). The print pages' pool and its reuse stay untouched, so
 * printing never inherits an image's viewport.
 *
 * Layer modifications (`layer-edits.ts`) are applied once the document is complete — loaded, and for
 * a scripted one its `pressroomReady` settled — on the live DOM, and their images decoded, right
 * before the capture: the template's scripts see the document as the template made it, and the
 * modifications have the last word.
 *
 * Size: the viewport is the template's canvas (CSS pixels) and the device scale factor is
 * `output width / canvas width`, so the page lays out at its designed size and is rasterised at the
 * asked resolution (`devicePixelRatio` follows, so `srcset` picks sharp images). The capture is clipped
 * to the canvas: what lies outside it is not in the image.
 */
import type { CDPSession } from 'puppeteer-core';
import { isAppError } from '../../shared/errors.js';
import { raceSignal } from '../cdp-helpers.js';
import type { ClosedRoomOptions, DocumentResources } from './closed-room.js';
import { PageTarget } from '../page-target.js';
import { tooManyLayers } from './document-bounds.js';
import { applyLayerEdits, type LayerEdits } from './layer-edits.js';
import { openBlankDocument } from './print-page.js';
import { ScriptedDocumentWatch } from './scripted-document.js';
import { disarmMetaRefresh } from './scripted-page.js';

/** Encodings Chromium's screenshot can produce. */
export type CaptureFormat = 'png' | 'jpeg' | 'webp';

/** What to capture. */
export interface CaptureParams {
  format: CaptureFormat;
  /** 1–100, for jpeg and webp. */
  quality: number;
  /** The layout viewport in CSS pixels (the template's canvas). */
  viewport: { width: number; height: number };
  /** Device pixels per CSS pixel. */
  scale: number;
  /** Run the document's scripts (it contains a `<script>`). */
  scripts: boolean;
  /** What the document may load: its account's assets, remote files (closed-room.ts). */
  resources?: DocumentResources;
  /** Image modifications to apply before the capture (none: the document as it is). */
  layers?: LayerEdits;
}

/** The encoded image, and the modifications that could not apply (warnings). */
export interface CapturedImage {
  image: Buffer;
  layerWarnings: string[];
}

/** Loads `html` into a fresh page of the closed room, applies the layer modifications and returns the encoded image. */
export async function captureImage(
  root: CDPSession,
  room: ClosedRoomOptions,
  html: string,
  params: CaptureParams,
  signal: AbortSignal,
): Promise<CapturedImage> {
  const context = params.scripts
    ? await raceSignal(root.send('Target.createBrowserContext', { disposeOnDetach: true }), signal)
    : undefined;
  const dispose = () => {
    if (context)
      root.send('Target.disposeBrowserContext', { browserContextId: context.browserContextId }).catch(() => {});
  };
  let target: PageTarget | undefined;
  let loads: LoadCounter | undefined;
  let watch: ScriptedDocumentWatch | undefined;
  let step = 'open page';
  try {
    // A visible window of its own: painted (see the file comment), and requestAnimationFrame runs.
    const opening = PageTarget.open(
      root,
      context ? { browserContextId: context.browserContextId } : { newWindow: true },
    );
    // A page that opens after the render was given up is closed, not left behind.
    opening.then(
      (opened) => {
        if (signal.aborted) void opened.close();
      },
      () => {},
    );
    target = await raceSignal(opening, signal);
    const all = AbortSignal.any([signal, target.lost]);
    const { session } = target;
    // The blank document's load event may come after its navigation has returned (lifecycle and
    // Page events are separate), so load events are counted: the document's own is the second.
    loads = new LoadCounter(session, all);
    step = 'open blank document';
    if (!params.scripts) await raceSignal(session.send('Emulation.setScriptExecutionDisabled', { value: true }), all);
    const { frameId, closedRoom } = await openBlankDocument(target, room, { scripts: params.scripts }, all);
    // A single-use page: its resources stay set until it is closed.
    closedRoom.resources = params.resources;
    params.resources?.review?.(html);
    await raceSignal(
      session.send('Emulation.setDeviceMetricsOverride', {
        ...params.viewport,
        deviceScaleFactor: params.scale,
        mobile: false,
      }),
      all,
    );
    await loads.reached(1);
    step = 'load document';
    // A scripted document may cut its own loading short: see scripted-document.ts.
    watch = params.scripts ? ScriptedDocumentWatch.start(session, frameId) : undefined;
    await raceSignal(
      session.send('Page.setDocumentContent', { frameId, html: params.scripts ? disarmMetaRefresh(html) : html }),
      all,
    );
    if (watch) step = 'wait for the document and pressroomReady';
    await (watch ? watch.ready(all) : loads.reached(2));
    let layerWarnings: string[] = [];
    if (params.layers && params.layers.edits.length > 0) {
      step = 'apply layer modifications';
      const edited = await applyLayerEdits(session, frameId, params.layers, all);
      if ('tooManyLayers' in edited) throw tooManyLayers(edited.tooManyLayers, params.layers.maxLayers);
      layerWarnings = edited.warnings;
      watch?.assertPresent();
    }
    step = 'capture';
    const capture = () =>
      raceSignal(
        session.send('Page.captureScreenshot', {
          format: params.format,
          ...(params.format === 'png' ? {} : { quality: params.quality }),
          clip: { x: 0, y: 0, ...params.viewport, scale: 1 },
          captureBeyondViewport: false,
          fromSurface: true,
        }),
        all,
      );
    const { data } = await (watch ? watch.run(capture, all) : capture());
    return { image: Buffer.from(data, 'base64'), layerWarnings };
  } catch (error) {
    // A document past the layer bound is the customer's to fix, not a failure of the capture.
    if (isAppError(error, 'DOCUMENT_TOO_LARGE')) throw error;
    room.logger.warn({ err: error, step }, 'image capture failed');
    throw error;
  } finally {
    loads?.stop();
    watch?.stop();
    await target?.close();
    dispose();
  }
}

/** Counts a page's load events from now on; `reached(n)` resolves once n have fired. */
class LoadCounter {
  #count = 0;
  #waiters: { n: number; resolve: () => void }[] = [];
  readonly #onLoad = () => {
    this.#count += 1;
    for (const waiter of this.#waiters.filter((w) => w.n <= this.#count)) waiter.resolve();
    this.#waiters = this.#waiters.filter((w) => w.n > this.#count);
  };

  constructor(
    private readonly session: CDPSession,
    private readonly signal: AbortSignal,
  ) {
    session.on('Page.loadEventFired', this.#onLoad);
  }

  reached(n: number): Promise<void> {
    if (this.#count >= n) return Promise.resolve();
    return raceSignal(new Promise<void>((resolve) => this.#waiters.push({ n, resolve })), this.signal);
  }

  stop(): void {
    this.session.off('Page.loadEventFired', this.#onLoad);
  }
}
