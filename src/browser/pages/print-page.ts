/**
 * Printing HTML to PDF, two ways:
 *
 *  - `PrintPage`, reused across documents (the fast path): JavaScript is disabled for the page
 *    (`Emulation.setScriptExecutionDisabled`), so a document can install nothing — no timer, no
 *    prototype patch, no listener — that could touch the next one, and its document is sandboxed
 *    without scripts, so a `<meta http-equiv="refresh">` cannot navigate it either. Each document
 *    replaces the previous one with `Page.setDocumentContent`; we wait for its load event and print.
 *  - `ScriptedPage` (`scripted-page.ts`), for documents that contain a `<script>` (charts): a page
 *    in a fresh browser context, used for one document and then disposed.
 *
 * Both pages sit at RENDER_ORIGIN behind the closed room, so `file://` is off limits by Chromium's
 * own rules, and a Content-Security-Policy refuses connections before interception even sees them.
 */
import type { CDPSession, Protocol } from 'puppeteer-core';
import { AppError, ValidationError } from '../../shared/errors.js';
import { raceSignal, readProtocolStream, waitForEvent, type StreamedBytes } from '../cdp-helpers.js';
import type { StreamSpill } from './spill-file.js';
import {
  ASSET_ORIGIN,
  ClosedRoom,
  RENDER_ORIGIN,
  type ClosedRoomOptions,
  type DocumentResources,
} from './closed-room.js';
import { cssPageTooLong, tooManyBytes, tooManyImagePixels, type DocumentBounds } from './document-bounds.js';
import { oversizePageRule } from './page-rule-size.js';
import { cutLongTables, mayHoldLongTable, type LongTableOptions } from './long-tables.js';
import { surveyAccessibility } from './accessibility-survey.js';
import { ImagePixelMeter } from './image-pixels.js';
import { PageTarget } from '../page-target.js';
import { ScriptedDocumentWatch } from './scripted-document.js';

const RENDER_URL = `${RENDER_ORIGIN}/`;

/** printToPDF parameters without the transfer mode, which is always a stream. */
export type PrintParams = Omit<Protocol.Page.PrintToPDFRequest, 'transferMode'>;

const SOURCES = `data: blob: ${ASSET_ORIGIN}`;
/**
 * Images, fonts and stylesheets may also name `https:`/`http:` URLs (issue 13): the closed room
 * hands each such request to the document's resources, which fetch it in Node through the outbound
 * guard or refuse it with a warning. The page itself still connects nowhere.
 */
const REMOTE_SOURCES = `${SOURCES} https: http:`;
/** Connections refused by the renderer itself; resources only from data:, blob:, the asset origin and (fetched for it) the web. */
const RESOURCE_CSP = [
  "default-src 'none'",
  `img-src ${REMOTE_SOURCES}`,
  `font-src ${REMOTE_SOURCES}`,
  `style-src 'unsafe-inline' ${REMOTE_SOURCES}`,
  `script-src 'unsafe-inline' 'unsafe-eval' ${SOURCES}`,
  `media-src ${SOURCES}`,
  `object-src ${SOURCES}`,
  'frame-src data: blob:',
  'worker-src data: blob:',
  "connect-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
];
/**
 * The reused print page's document is also sandboxed without `allow-scripts`. Disabling JavaScript
 * alone does not stop a `<meta http-equiv="refresh">`: after the load event it navigates the page
 * (a reload, or to about:blank, which needs no request the closed room could refuse). Printing
 * while that navigation starts fails (`Printing failed`, seen under load), and a page that reached
 * about:blank would print the next documents without this policy. Chromium refuses a meta refresh
 * in a document sandboxed without `allow-scripts`. `allow-same-origin` keeps the document at
 * RENDER_ORIGIN, so images, fonts and stylesheets load exactly as before.
 */
const SCRIPTLESS_HEADERS = { 'Content-Security-Policy': ['sandbox allow-same-origin', ...RESOURCE_CSP].join('; ') };
/** A scripted page needs scripts, and scripts may navigate anyway: see `scripted-page.ts`. */
const SCRIPTED_HEADERS = { 'Content-Security-Policy': RESOURCE_CSP.join('; ') };
const BLANK = '<!doctype html><title></title>';

/** A reused print page with JavaScript disabled. One document at a time. */
export class PrintPage {
  readonly #meter: ImagePixelMeter;

  private constructor(
    private readonly target: PageTarget,
    private readonly frameId: string,
    private readonly room: ClosedRoom,
  ) {
    this.#meter = new ImagePixelMeter(target.session, frameId);
  }

  /** Opens the page at RENDER_ORIGIN with scripts off. */
  static async open(root: CDPSession, room: ClosedRoomOptions, signal: AbortSignal): Promise<PrintPage> {
    const target = await PageTarget.open(root, { background: true }, signal);
    try {
      // Every step under `signal`: a page whose renderer died before it committed never answers.
      const send = <T>(sending: Promise<T>) => raceSignal(sending, AbortSignal.any([signal, target.lost]));
      await send(target.session.send('Emulation.setScriptExecutionDisabled', { value: true }));
      // The page is reused and its documents replace each other in place (setDocumentContent), so
      // an image URL a previous document loaded would be reused by URL without a request — the next
      // document's account must never get the previous one's `asset()` (issue 13). No cache at all.
      await send(target.session.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 }));
      await send(target.session.send('Network.setCacheDisabled', { cacheDisabled: true }));
      const { frameId, closedRoom } = await openBlankDocument(target, room, { scripts: false }, signal);
      return new PrintPage(target, frameId, closedRoom);
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

  /** Replaces the document with `html`, waits for its load event and prints it within `bounds`. */
  async print(
    html: string,
    params: PrintParams,
    bounds: PrintBounds,
    signal: AbortSignal,
    resources?: DocumentResources,
  ): Promise<StreamedBytes> {
    this.room.resources = resources;
    try {
      resources?.review?.(html);
      return await loadAndPrint(this.target, this.frameId, html, params, signal, {
        scripted: false,
        bounds,
        meter: this.#meter,
        resources,
      });
    } catch (error) {
      // A command may still be in flight on this page; it cannot take the next document.
      this.target.markLost('abandoned');
      throw error;
    } finally {
      this.room.resources = undefined;
    }
  }
}

/**
 * Serves a blank document at RENDER_URL behind the closed room and navigates there; `scripts` picks
 * the policy (a script-less page is also sandboxed, see SCRIPTLESS_HEADERS). Served once: should a
 * document still ask for a reload, the closed room refuses it rather than navigate the page back
 * to a blank document while it, or the next one, is being printed.
 */
export async function openBlankDocument(
  target: PageTarget,
  room: ClosedRoomOptions,
  page: { scripts: boolean },
  signal: AbortSignal,
): Promise<{ frameId: string; closedRoom: ClosedRoom }> {
  const closedRoom = new ClosedRoom(target.session, room);
  closedRoom.serve(RENDER_URL, { html: BLANK, headers: page.scripts ? SCRIPTED_HEADERS : SCRIPTLESS_HEADERS }, true);
  await raceSignal(closedRoom.enable(), AbortSignal.any([signal, target.lost]));
  return { frameId: await target.navigate(RENDER_URL, signal), closedRoom };
}

/**
 * The bounds the print step itself enforces; the page bound is the renderer's (`pdf-renderer.ts`).
 * `checkLength`, when given, sees the laid-out document's height in CSS pixels before printing and
 * may throw to refuse it (a synchronous request that would print past its deadline, `pdf-renderer.ts`).
 */
export type PrintBounds = Pick<DocumentBounds, 'maxDocumentBytes' | 'maxImagePixels'> & {
  /** The longest page side Chromium prints; a failed print past it is named (page-rule-size.ts). */
  maxPageInches: number;
  checkLength?: (contentHeightPx: number) => void;
  /** A long PDF goes to this file as Chromium streams it, instead of memory (cdp-helpers.ts). */
  spill?: StreamSpill;
  /** Long tables cut into parts before printing (long-tables.ts); `leftAlone` hears each one that could not be. */
  longTables?: LongTableOptions & { leftAlone?: (reason: string) => void };
  /** PDF/UA: the template's language, title and images' alternative texts are checked before printing (accessibility-survey.ts). */
  accessible?: boolean;
};

/**
 * Writes `html` into the page (document.open/write/close via setDocumentContent), waits for its
 * load event — subresources such as data: images and fonts are in by then — and prints. A
 * `scripted` document is waited for by `ScriptedDocumentWatch` instead: until it is complete, and
 * until the promise it may set as `window.pressroomReady` (charts that draw asynchronously) has
 * settled, within the render deadline.
 *
 * With `bounds` (every customer document; our own warm-up prints go without), before printing the
 * document's images are measured (`image-pixels.ts`) and a document whose images decode to more
 * than `maxImagePixels` is refused; the PDF is then read as a stream and counted as it arrives,
 * stopped past `maxDocumentBytes`. The PDF always comes as a stream (`ReturnAsStream`), never
 * inside the printToPDF answer: one message would have to hold all of it, and a 400 MB PDF in one
 * message ended the service process once (issue 15). The stream costs one more round trip per
 * document (docs/performance-log/2026-11-23-first-benchmarks.md has what it cost).
 * The image check costs one more round trip for a document without images, two with.
 */
export async function loadAndPrint(
  target: PageTarget,
  frameId: string,
  html: string,
  params: PrintParams,
  signal: AbortSignal,
  options: {
    scripted: boolean;
    bounds?: PrintBounds;
    meter?: ImagePixelMeter;
    resources?: DocumentResources | undefined;
  },
): Promise<StreamedBytes> {
  const { session } = target;
  const { bounds } = options;
  const all = AbortSignal.any([signal, target.lost]);
  // A scripted document may cut its own loading short: see scripted-document.ts.
  const watch = options.scripted ? ScriptedDocumentWatch.start(session, frameId) : undefined;
  let restoreScreen: (() => Promise<boolean>) | undefined;
  try {
    // The previous document's load fired before it was printed, so the next load event is this one's.
    const loaded = watch ? undefined : waitForEvent(session, 'Page.loadEventFired', () => true, all);
    loaded?.catch(() => {});
    await raceSignal(session.send('Page.setDocumentContent', { frameId, html }), all);
    await (watch ? watch.ready(all) : loaded);
    if (bounds) {
      const meter = options.meter ?? new ImagePixelMeter(session, frameId);
      // Layout is done by the load event; its height needs no script on the page, one round trip,
      // asked for beside the image measure's rather than after it (both only read the page).
      const layout = bounds.checkLength ? raceSignal(session.send('Page.getLayoutMetrics'), all) : undefined;
      layout?.catch(() => {});
      const { pixels, undecoded } = await meter.measure(all);
      if (pixels > bounds.maxImagePixels) throw tooManyImagePixels(pixels, bounds.maxImagePixels);
      for (const url of undecoded) options.resources?.undecodedImage?.(url);
      if (layout && bounds.checkLength) bounds.checkLength((await layout).cssContentSize.height);
      if (bounds.accessible) {
        const problems = await surveyAccessibility(session, frameId, all);
        if (problems.length > 0)
          throw new ValidationError(
            problems.map((p) => ({
              loc: ['body', 'pdf_ua'],
              msg: `${p.message} PDF/UA needs it (Matterhorn checkpoint ${p.checkpoint}).`,
              type: `value_error.pdf_ua.${p.checkpoint}`,
              // The element, for programs (the studio places the problem at its tag by it).
              ctx: p.ctx,
            })),
          );
      }
      const long = bounds.longTables;
      if (long && mayHoldLongTable(html, long.minRows, options.scripted)) {
        const cut = await cutLongTables(session, frameId, { ...long, geometry: params }, all);
        restoreScreen = cut.restore;
        for (const reason of cut.leftAlone) long.leftAlone?.(reason);
      }
    }
    const print = async (): Promise<StreamedBytes> => {
      const { stream } = await raceSignal(
        session.send('Page.printToPDF', { ...params, transferMode: 'ReturnAsStream' }),
        all,
      ).catch(async (error: unknown) => {
        // Chromium says only "Printing failed" for a page it cannot print: name the size when it was that.
        const size =
          bounds && !all.aborted
            ? await oversizePageRule(session, frameId, bounds.maxPageInches, all).catch(() => null)
            : null;
        throw size ? cssPageTooLong(size, bounds!.maxPageInches) : error;
      });
      if (!stream) throw new AppError('RENDER_FAILED', 'Chromium returned no PDF stream');
      const limit = bounds && {
        maxBytes: bounds.maxDocumentBytes,
        tooLarge: () => tooManyBytes(bounds.maxDocumentBytes),
      };
      return readProtocolStream(session, stream, all, limit, bounds?.spill);
    };
    const printed = await (watch ? watch.run(print, all) : print());
    // Only after a print: a failed one leaves a page that is replaced, and may not answer at all.
    // A page left at another document's print width would print the next one differently.
    if (restoreScreen && !(await restoreScreen())) target.markLost('abandoned');
    return printed;
  } finally {
    watch?.stop();
  }
}
