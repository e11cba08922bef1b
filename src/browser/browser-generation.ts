/**
 * One launched Chromium and the page slots opened in it. The supervisor (`browser-supervisor.ts`) keeps
 * one current generation and replaces it when it crashes or after N renders.
 *
 * States: live → retiring (no new renders; closes once its in-flight renders return their slots)
 *         → closed. A crash (`disconnected`) jumps straight to closed.
 *
 * While it renders, its renderer and print compositor processes are watched and one that goes past
 * `rendererMemoryMb` is killed (`browser/process-memory-watch.ts`): a killed renderer crashes its
 * page (the render on it fails, `killedRendererSince` tells the renderer why), a killed compositor's
 * print is found and stopped (`browser/pages/print-tracker.ts`). The browser itself goes on.
 */
import type { Logger } from '../shared/log.js';
import { captureImage, type CapturedImage, type CaptureParams } from './pages/capture-image.js';
import { raceSignal, type StreamedBytes } from './cdp-helpers.js';
import type { ClosedRoomOptions, DocumentResources } from './pages/closed-room.js';
import { launchChromium, type LaunchedChromium } from './launch-chromium.js';
import { tooMuchMemory } from './pages/document-bounds.js';
import type { PrintBounds, PrintParams } from './pages/print-page.js';
import { PrintTracker } from './pages/print-tracker.js';
import { ProcessMemoryWatch, type KilledProcess } from './process-memory-watch.js';
import { ScriptedPage } from './pages/scripted-page.js';
import { PageSlot } from './page-slot.js';

export interface GenerationOptions {
  id: number;
  executablePath: string;
  sinkholePort: number;
  protocolTimeoutMs: number;
  room: ClosedRoomOptions;
  /** A renderer or print compositor past this many MB (resident) is killed. */
  rendererMemoryMb: number;
  logger: Logger;
  onPageReplaced: () => void;
  onDisconnected: (generation: BrowserGeneration) => void;
}

/** How often the memory watch reads /proc while renders are under way. */
const MEMORY_POLL_MS = 250;
/** Renderer kills are remembered this long, to tell the renders they failed why. */
const RENDERER_KILL_MEMORY_MS = 10 * 60_000;

/** A browser process with its pool of reusable page slots. */
export class BrowserGeneration {
  /** Renders started on this browser (drives recycling). */
  renders = 0;
  readonly #prints = new PrintTracker();
  readonly #memoryWatch: ProcessMemoryWatch | undefined;
  /** When the memory watch killed a renderer of this browser (performance.now()). */
  #rendererKills: number[] = [];
  readonly #idle: PageSlot[] = [];
  readonly #slots = new Set<PageSlot>();
  #busy = 0;
  #scriptedSpare: Promise<ScriptedPage> | undefined;
  #retiring = false;
  #closed: Promise<void> | undefined;
  #markClosed!: () => void;
  readonly #closedSignal = new Promise<void>((resolve) => (this.#markClosed = resolve));

  private constructor(
    private readonly chromium: LaunchedChromium,
    private readonly options: GenerationOptions,
  ) {
    this.#memoryWatch =
      chromium.pid === undefined
        ? undefined
        : new ProcessMemoryWatch({
            rootPid: chromium.pid,
            limitBytes: options.rendererMemoryMb * 1024 * 1024,
            intervalMs: MEMORY_POLL_MS,
            logger: options.logger,
            onKilled: (killed) => this.#onMemoryKill(killed),
          });
    chromium.browser.once('disconnected', () => {
      if (this.#closed) return;
      options.logger.error(
        { generation: options.id, pid: chromium.pid },
        'Chromium disconnected (crashed or killed); it will be replaced',
      );
      void this.close();
      options.onDisconnected(this);
    });
  }

  /** Launches Chromium and opens `prewarmSlots` slots; when `stop` aborts, the new browser is closed at once. */
  static async start(options: GenerationOptions, prewarmSlots: number, stop: AbortSignal): Promise<BrowserGeneration> {
    const chromium = await launchChromium({
      executablePath: options.executablePath,
      sinkholePort: options.sinkholePort,
      protocolTimeoutMs: options.protocolTimeoutMs,
      signal: stop,
      logger: options.logger,
    });
    const generation = new BrowserGeneration(chromium, options);
    try {
      stop.throwIfAborted();
      await generation.prewarm(prewarmSlots, stop);
    } catch (error) {
      await generation.close();
      throw error;
    }
    options.logger.info(
      { generation: options.id, pid: chromium.pid, slots: prewarmSlots, rendererMemoryMb: options.rendererMemoryMb },
      'Chromium started',
    );
    return generation;
  }

  get id(): number {
    return this.options.id;
  }

  get pid(): number | undefined {
    return this.chromium.pid;
  }

  /** Usable for new renders. */
  /** True while the browser is connected and not closed (a retiring browser still finishes its renders). */
  get isConnected(): boolean {
    return !this.#closed && this.chromium.browser.connected;
  }

  get isLive(): boolean {
    return !this.#closed && !this.#retiring && this.chromium.browser.connected;
  }

  /** Opens slots up to `count` idle ones, in parallel (giving up when `stop` aborts). */
  async prewarm(count: number, stop?: AbortSignal): Promise<void> {
    const missing = Math.max(0, count - this.#slots.size);
    const opened = Array.from({ length: missing }, () => this.#newSlot());
    const deadline = AbortSignal.timeout(30_000);
    const signal = stop ? AbortSignal.any([deadline, stop]) : deadline;
    await Promise.all(opened.map((slot) => slot.ready(signal)));
    this.#idle.push(...opened);
  }

  /** Takes an idle slot, or a new one (its pages open in `ready()`). */
  takeSlot(): PageSlot {
    this.#busy += 1;
    return this.#idle.pop() ?? this.#newSlot();
  }

  /** Gives a slot back after a render; lost pages are replaced in the background. */
  returnSlot(slot: PageSlot): void {
    this.#busy -= 1;
    if (this.#closed) return;
    if (this.#retiring) {
      this.#slots.delete(slot);
      void slot.close();
      if (this.#busy === 0) void this.close();
      return;
    }
    slot.repairInBackground();
    this.#idle.push(slot);
  }

  /** Watches this browser's document processes while a render is under way; call the result when it is done. */
  watchRender(): () => void {
    return this.#memoryWatch?.hold() ?? (() => {});
  }

  /** True when the memory watch killed one of this browser's renderers after `sinceMs` (performance.now()). */
  killedRendererSince(sinceMs: number): boolean {
    return this.#rendererKills.some((at) => at >= sinceMs);
  }

  /**
   * Prints `html` within `bounds`: on the print page of the render's slot, or for a document with scripts in a single-use context. Tracked, so that a print whose compositor
   * the memory watch killed is stopped with DOCUMENT_TOO_LARGE instead of waiting for its deadline.
   */
  async print(
    html: string,
    params: PrintParams,
    options: {
      bounds: PrintBounds;
      scripted: boolean;
      slot: PageSlot;
      signal: AbortSignal;
      resources?: DocumentResources;
    },
  ): Promise<StreamedBytes> {
    const tracked = this.#prints.begin();
    try {
      const signal = AbortSignal.any([options.signal, tracked.signal]);
      const page = options.scripted ? undefined : options.slot.printPage();
      const pdf = page
        ? await page.print(html, params, options.bounds, signal, options.resources)
        : await this.#printScripted(html, params, options.bounds, signal, options.resources);
      tracked.end(true);
      return pdf;
    } catch (error) {
      tracked.end(false);
      throw error;
    }
  }

  /** Prints a scripted document in a single-use browser context, keeping one spare ready. */
  async #printScripted(
    html: string,
    params: PrintParams,
    bounds: PrintBounds,
    signal: AbortSignal,
    resources: DocumentResources | undefined,
  ): Promise<StreamedBytes> {
    const spare = this.#scriptedSpare;
    this.#scriptedSpare = undefined;
    let page = spare ? await raceSignal(spare, signal).catch(() => undefined) : undefined;
    if (!this.#closed) {
      this.#scriptedSpare = ScriptedPage.open(this.chromium.root, this.options.room);
      this.#scriptedSpare.catch(() => {});
    }
    if (!page?.isUsable) {
      page?.dispose();
      page = await raceSignal(ScriptedPage.open(this.chromium.root, this.options.room), signal);
    }
    return page.print(html, params, bounds, signal, resources);
  }

  /** Takes a picture of a document on a single-use page of this browser (browser/pages/capture-image.ts). */
  captureImage(html: string, params: CaptureParams, signal: AbortSignal): Promise<CapturedImage> {
    return captureImage(this.chromium.root, this.options.room, html, params, signal);
  }

  /** Stops taking renders; closes once the in-flight ones are done. */
  retire(): void {
    if (this.#retiring) return;
    this.#retiring = true;
    this.options.logger.info(
      { generation: this.options.id, renders: this.renders },
      'Chromium retiring after its render quota',
    );
    for (const slot of this.#idle.splice(0)) {
      this.#slots.delete(slot);
      void slot.close();
    }
    if (this.#busy === 0) void this.close();
  }

  /** Resolves once the browser has been closed (after `retire()` drained it, or `close()`). */
  whenClosed(): Promise<void> {
    return this.#closedSignal;
  }

  /** Ends the browser process and removes its profile directory. */
  close(): Promise<void> {
    this.#memoryWatch?.stop();
    this.#closed ??= this.chromium.shutdown().then(() => {
      this.options.logger.debug({ generation: this.options.id, pid: this.chromium.pid }, 'Chromium closed');
      this.#markClosed();
    });
    return this.#closed;
  }

  #onMemoryKill(killed: KilledProcess): void {
    if (killed.kind === 'print-compositor') {
      this.#prints.compositorKilled(killed.startTicks, tooMuchMemory(this.options.rendererMemoryMb));
      return;
    }
    const now = performance.now();
    this.#rendererKills = [...this.#rendererKills.filter((at) => at > now - RENDERER_KILL_MEMORY_MS), now];
  }

  #newSlot(): PageSlot {
    const { options } = this;
    const slot = new PageSlot(this.chromium.root, options.room, options.onPageReplaced);
    this.#slots.add(slot);
    return slot;
  }
}
