/**
 * Taking a picture of an HTML document: the image counterpart of `print-page.ts`.
 *
 * Each image is taken on a single-use page behind the same closed room as printing
 * (`openBlankDocument`: RENDER_ORIGIN, the same CSP, request interception), closed afterwards:
 *   - a document without `<script>`: a hidden page in the default context with JavaScript disabled
 *     and the script-less sandbox policy, exactly like the reused print page;
 *   - a document with `<script>` (charts): a page in its own throwaway browser context, scripts on,
 *     `<meta http-equiv="refresh">` disarmed and `window.pressroomReady` awaited, like `ScriptedPage`.
 * A fresh page costs ~0.5–0.7 s on the busy 2-core test machine (measured with a scratch CDP script);
 * the print pages' pool and its reuse stay untouched, so printing never inherits an image's viewport.
 *
 * Size: the viewport is the template's canvas (CSS pixels) and the device scale factor is
 * `output width / canvas width`, so the page lays out at its designed size and is rasterised at the
 * asked resolution (`devicePixelRatio` follows, so `srcset` picks sharp images). The capture is clipped
 * to the canvas: what lies outside it is not in the image.
 */
import type { CDPSession } from 'puppeteer-core';
import { raceSignal, waitForEvent } from './cdp-helpers.js';
import type { ClosedRoomOptions } from './closed-room.js';
import { PageTarget } from './page-target.js';
import { openBlankDocument } from './print-page.js';
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
}

/** Loads `html` into a fresh page of the closed room and returns the encoded image. */
export async function captureImage(root: CDPSession, room: ClosedRoomOptions, html: string, params: CaptureParams, signal: AbortSignal): Promise<Buffer> {
  const context = params.scripts ? await raceSignal(root.send('Target.createBrowserContext', { disposeOnDetach: true }), signal) : undefined;
  const dispose = () => {
    if (context) root.send('Target.disposeBrowserContext', { browserContextId: context.browserContextId }).catch(() => {});
  };
  let target: PageTarget | undefined;
  try {
    // A scripted page gets its own (visible) window so requestAnimationFrame runs; a script-less one stays hidden.
    const opening = PageTarget.open(root, context ? { browserContextId: context.browserContextId } : { background: true });
    // A page that opens after the render was given up is closed, not left behind.
    opening.then((opened) => {
      if (signal.aborted) void opened.close();
    }, () => {});
    target = await raceSignal(opening, signal);
    const all = AbortSignal.any([signal, target.lost]);
    const { session } = target;
    if (!params.scripts) await raceSignal(session.send('Emulation.setScriptExecutionDisabled', { value: true }), all);
    const frameId = await openBlankDocument(target, room, { scripts: params.scripts }, all);
    await raceSignal(session.send('Emulation.setDeviceMetricsOverride', { ...params.viewport, deviceScaleFactor: params.scale, mobile: false }), all);
    const loaded = waitForEvent(session, 'Page.loadEventFired', () => true, all);
    loaded.catch(() => {});
    await raceSignal(session.send('Page.setDocumentContent', { frameId, html: params.scripts ? disarmMetaRefresh(html) : html }), all);
    await loaded;
    if (params.scripts) {
      const expression = 'Promise.resolve(window.pressroomReady).then(() => true, () => true)';
      await raceSignal(session.send('Runtime.evaluate', { expression, awaitPromise: true }), all);
    }
    const { data } = await raceSignal(
      session.send('Page.captureScreenshot', {
        format: params.format,
        ...(params.format === 'png' ? {} : { quality: params.quality }),
        clip: { x: 0, y: 0, ...params.viewport, scale: 1 },
        captureBeyondViewport: false,
        fromSurface: true,
      }),
      all,
    );
    return Buffer.from(data, 'base64');
  } finally {
    await target?.close();
    dispose();
  }
}
