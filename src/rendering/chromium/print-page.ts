/**
 * Printing HTML to PDF, two ways:
 *
 *  - `PrintPage`, reused across documents (the fast path): JavaScript is disabled for the page
 *    (`Emulation.setScriptExecutionDisabled`), so a document can install nothing — no timer, no
 *    prototype patch, no listener — that could touch the next one. Each document replaces the
 *    previous one with `Page.setDocumentContent`; we wait for its load event and print.
 *  - `printScriptedDocument`, for documents that contain a `<script>` (charts): a fresh browser
 *    context (own storage, own renderer process) and page, navigated to the document, printed,
 *    then disposed, so its scripts cannot outlive it. Slower (a new renderer), but only for them.
 *
 * Both pages sit at RENDER_ORIGIN behind the closed room, so `file://` is off limits by Chromium's
 * own rules, and a Content-Security-Policy refuses connections before interception even sees them.
 */
import type { CDPSession, Protocol } from 'puppeteer-core';
import { AppError } from '../../shared/errors.js';
import { raceSignal, readProtocolStream, waitForEvent } from './cdp-helpers.js';
import { ASSET_ORIGIN, ClosedRoom, RENDER_ORIGIN, type ClosedRoomOptions } from './closed-room.js';
import { PageTarget } from './page-target.js';

const RENDER_URL = `${RENDER_ORIGIN}/`;

/** printToPDF parameters without the transfer mode, which is always a stream. */
export type PrintParams = Omit<Protocol.Page.PrintToPDFRequest, 'transferMode'>;

const SOURCES = `data: blob: ${ASSET_ORIGIN}`;
/** Connections refused by the renderer itself; resources only from data:, blob: and the asset origin. */
const PRINT_CSP = [
  "default-src 'none'",
  `img-src ${SOURCES}`,
  `font-src ${SOURCES}`,
  `style-src 'unsafe-inline' ${SOURCES}`,
  `script-src 'unsafe-inline' 'unsafe-eval' ${SOURCES}`,
  `media-src ${SOURCES}`,
  `object-src ${SOURCES}`,
  'frame-src data: blob:',
  'worker-src data: blob:',
  "connect-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
].join('; ');
const PRINT_HEADERS = { 'Content-Security-Policy': PRINT_CSP };

interface LifecycleEvent {
  frameId: string;
  loaderId: string;
  name: string;
}

/** A reused print page with JavaScript disabled. One document at a time. */
export class PrintPage {
  private constructor(
    private readonly target: PageTarget,
    private readonly frameId: string,
  ) {}

  /** Opens the page at RENDER_ORIGIN with scripts off. */
  static async open(root: CDPSession, room: ClosedRoomOptions, signal: AbortSignal): Promise<PrintPage> {
    const target = await PageTarget.open(root, { background: true });
    try {
      const { session } = target;
      const closedRoom = new ClosedRoom(session, room);
      closedRoom.serve(RENDER_URL, { html: '<!doctype html><title></title>', headers: PRINT_HEADERS });
      await closedRoom.enable();
      await Promise.all([
        session.send('Page.enable'),
        session.send('Page.setLifecycleEventsEnabled', { enabled: true }),
        session.send('Emulation.setScriptExecutionDisabled', { value: true }),
      ]);
      const frameId = await navigate(target, signal);
      // From here on only Page.loadEventFired is needed: fewer events per document.
      await session.send('Page.setLifecycleEventsEnabled', { enabled: false });
      return new PrintPage(target, frameId);
    } catch (error) {
      await target.close();
      throw error;
    }
  }

  /** True once the page crashed, timed out or was closed; the pool must replace it. */
  get isLost(): boolean {
    return this.target.isLost;
  }

  close(): Promise<void> {
    return this.target.close();
  }

  /** Replaces the document with `html`, waits for its load event and prints it. */
  async print(html: string, params: PrintParams, signal: AbortSignal): Promise<Buffer> {
    const { session } = this.target;
    const all = AbortSignal.any([signal, this.target.lost]);
    try {
      // setDocumentContent runs document.open/write/close; the load event follows once subresources
      // (data: images, fonts) are in. The previous document's load fired before it was printed.
      const loaded = waitForEvent(session, 'Page.loadEventFired', () => true, all);
      loaded.catch(() => {});
      await raceSignal(session.send('Page.setDocumentContent', { frameId: this.frameId, html }), all);
      await loaded;
      return await printToPdf(session, params, all);
    } catch (error) {
      // A command may still be in flight on this page; it cannot take the next document.
      this.target.markLost('abandoned');
      throw error;
    }
  }
}

/** Prints a document that needs JavaScript in a throwaway browser context. */
export async function printScriptedDocument(
  root: CDPSession,
  room: ClosedRoomOptions,
  html: string,
  params: PrintParams,
  signal: AbortSignal,
): Promise<Buffer> {
  const { browserContextId } = await raceSignal(root.send('Target.createBrowserContext', { disposeOnDetach: true }), signal);
  try {
    const target = await raceSignal(PageTarget.open(root, { browserContextId }), signal);
    const { session } = target;
    const closedRoom = new ClosedRoom(session, room);
    closedRoom.serve(RENDER_URL, { html, headers: PRINT_HEADERS }, true);
    await closedRoom.enable();
    await Promise.all([session.send('Page.enable'), session.send('Page.setLifecycleEventsEnabled', { enabled: true })]);
    const all = AbortSignal.any([signal, target.lost]);
    await navigate(target, all);
    // Optional hook for asynchronous drawing (charts with animation): a document may set
    // `window.pressroomReady` to a promise; printing waits for it (within the render deadline).
    await raceSignal(
      session.send('Runtime.evaluate', { expression: 'Promise.resolve(window.pressroomReady).then(() => true, () => true)', awaitPromise: true }),
      all,
    );
    return await printToPdf(session, params, all);
  } finally {
    // Closes its page and kills its renderer; storage of the context is discarded with it.
    root.send('Target.disposeBrowserContext', { browserContextId }).catch(() => {});
  }
}

/** Navigates the page to RENDER_URL (served by the closed room) and waits for its load event. */
async function navigate(target: PageTarget, signal: AbortSignal): Promise<string> {
  const { session } = target;
  // The load event may arrive before Page.navigate answers, so remember loads until we know ours.
  let loaderId: string | undefined;
  const loadedLoaders = new Set<string>();
  let markLoaded!: () => void;
  const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
  const onLifecycle = (e: LifecycleEvent) => {
    if (e.name !== 'load') return;
    loadedLoaders.add(e.loaderId);
    if (e.loaderId === loaderId) markLoaded();
  };
  session.on('Page.lifecycleEvent', onLifecycle);
  try {
    const navigation = await raceSignal(session.send('Page.navigate', { url: RENDER_URL }), signal);
    if (navigation.errorText) throw new AppError('RENDER_FAILED', `The print page did not load: ${navigation.errorText}`);
    loaderId = navigation.loaderId ?? '';
    if (!loadedLoaders.has(loaderId)) await raceSignal(loaded, signal);
    return navigation.frameId;
  } finally {
    session.off('Page.lifecycleEvent', onLifecycle);
  }
}

async function printToPdf(session: CDPSession, params: PrintParams, signal: AbortSignal): Promise<Buffer> {
  const { stream } = await raceSignal(session.send('Page.printToPDF', { ...params, transferMode: 'ReturnAsStream' }), signal);
  if (!stream) throw new AppError('RENDER_FAILED', 'Chromium returned no PDF stream');
  return readProtocolStream(session, stream, signal);
}
