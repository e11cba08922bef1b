/**
 * One launched Chromium and the page slots opened in it. The supervisor (`pdf-renderer.ts`) keeps
 * one current generation and replaces it when it crashes or after N renders.
 *
 * States: live → retiring (no new renders; closes once its in-flight renders return their slots)
 *         → closed. A crash (`disconnected`) jumps straight to closed.
 */
import type { Logger } from '../shared/log.js';
import { captureImage, type CaptureParams } from './chromium/capture-image.js';
import { raceSignal } from './chromium/cdp-helpers.js';
import type { ClosedRoomOptions } from './chromium/closed-room.js';
import { launchChromium, type LaunchedChromium } from './chromium/launch-chromium.js';
import type { PrintParams } from './chromium/print-page.js';
import { ScriptedPage } from './chromium/scripted-page.js';
import { PageSlot } from './page-slot.js';
import type { EvaluatorKind } from './sandbox/evaluator-page.js';

export interface GenerationOptions {
  id: number;
  executablePath: string;
  sinkholePort: number;
  protocolTimeoutMs: number;
  /** How templates are evaluated (`sandbox/evaluator-page.ts`). */
  evaluator: EvaluatorKind;
  room: ClosedRoomOptions;
  logger: Logger;
  onPageReplaced: () => void;
  onDisconnected: (generation: BrowserGeneration) => void;
}

/** A browser process with its pool of reusable page slots. */
export class BrowserGeneration {
  /** Renders started on this browser (drives recycling). */
  renders = 0;
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
    chromium.browser.once('disconnected', () => {
      if (this.#closed) return;
      options.logger.error({ generation: options.id, pid: chromium.pid }, 'Chromium disconnected (crashed or killed); it will be replaced');
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
    });
    const generation = new BrowserGeneration(chromium, options);
    try {
      stop.throwIfAborted();
      await generation.prewarm(prewarmSlots, stop);
    } catch (error) {
      await generation.close();
      throw error;
    }
    options.logger.info({ generation: options.id, pid: chromium.pid, slots: prewarmSlots }, 'Chromium started');
    return generation;
  }

  get id(): number {
    return this.options.id;
  }

  get pid(): number | undefined {
    return this.chromium.pid;
  }

  /** Usable for new renders. */
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

  /** Prints a scripted document in a single-use browser context, keeping one spare ready. */
  async printScripted(html: string, params: PrintParams, signal: AbortSignal): Promise<Buffer> {
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
    return page.print(html, params, signal);
  }

  /** Takes a picture of a document on a single-use page of this browser (chromium/capture-image.ts). */
  captureImage(html: string, params: CaptureParams, signal: AbortSignal): Promise<Buffer> {
    return captureImage(this.chromium.root, this.options.room, html, params, signal);
  }

  /** Stops taking renders; closes once the in-flight ones are done. */
  retire(): void {
    if (this.#retiring) return;
    this.#retiring = true;
    this.options.logger.info({ generation: this.options.id, renders: this.renders }, 'Chromium retiring after its render quota');
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
    this.#closed ??= this.chromium.shutdown().then(() => {
      this.options.logger.debug({ generation: this.options.id, pid: this.chromium.pid }, 'Chromium closed');
      this.#markClosed();
    });
    return this.#closed;
  }

  #newSlot(): PageSlot {
    const slot = new PageSlot(this.chromium.root, this.options.room, this.options.onPageReplaced, { kind: this.options.evaluator });
    this.#slots.add(slot);
    return slot;
  }
}
