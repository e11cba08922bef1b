/**
 * The supervisor: keeps one live Chromium (a `BrowserGeneration`) available, and leases its page slots
 * to renders (`withSlot`):
 *   - launches lazily, one launch at a time, or on `warmUp()`;
 *   - on a crash (`disconnected`) drops it and starts a replacement at once, so readiness recovers
 *     without waiting for traffic (renders in flight on the crashed browser fail; queued ones wait);
 *   - after `recycleAfterRenders` renders starts a new browser beside the old one, switches new
 *     renders to it, and lets the old one close when its last in-flight render returns its slot —
 *     recycling never fails a render.
 *   - a lease waits for a live browser, watches the render's memory, takes and returns the slot, and
 *     tries the work once more on fresh pages when a page crashed of causes not the document's own.
 * One network sinkhole serves every generation.
 */
import { AppError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { BrowserGeneration } from './browser-generation.js';
import { raceSignal, type StreamedBytes } from './cdp-helpers.js';
import type { CapturedImage, CaptureParams } from './pages/capture-image.js';
import type { AssetResolver, DocumentResources } from './pages/closed-room.js';
import { tooMuchMemory } from './pages/document-bounds.js';
import { openNetworkSinkhole, type NetworkSinkhole } from './pages/network-sinkhole.js';
import type { PrintBounds, PrintParams } from './pages/print-page.js';
import type { EvaluatorPage } from './sandbox/evaluator-page.js';

export interface SupervisorOptions {
  chromiumPath: string;
  concurrency: number;
  /** The render deadlines, sync and of jobs: DevTools commands are given longer (protocolTimeoutMs). */
  timeoutMs: number;
  asyncTimeoutMs: number;
  recycleAfterRenders: number;
  assetResolver: AssetResolver | undefined;
  /** Renderer and print compositor processes past this many MB are killed (browser-generation.ts). */
  rendererMemoryMb: number;
}

/** Browser counters for `stats()`. */
export interface SupervisorCounters {
  launches: number;
  crashes: number;
  pagesReplaced: number;
  blockedRequests: number;
  /** Leases whose work was tried once more on fresh pages because a page renderer had crashed. */
  pageCrashRetries: number;
}

/** One render's hold on a page slot of a live browser: its evaluator, and the print and capture on its pages. */
export interface SlotLease {
  /** The slot's evaluator page, opened or repaired first if it has to be. */
  evaluator(signal: AbortSignal): Promise<EvaluatorPage>;
  /** Prints on the slot's print page, or for a document with scripts in a single-use context. */
  print(html: string, params: PrintParams, options: LeasePrintOptions): Promise<StreamedBytes>;
  /** A picture of the document, on a single-use page of the same browser. */
  captureImage(html: string, params: CaptureParams, signal: AbortSignal): Promise<CapturedImage>;
}

export interface LeasePrintOptions {
  bounds: PrintBounds;
  scripted: boolean;
  signal: AbortSignal;
  resources?: DocumentResources;
}

/** What a lease runs under: the render's signal (its deadline and its caller's), and the caller's alone. */
export interface LeaseOptions {
  signal: AbortSignal;
  /** The caller's own signal: a render it stopped is not explained as the document's memory. */
  callerSignal?: AbortSignal;
}

export class BrowserSupervisor {
  readonly counters: SupervisorCounters = {
    launches: 0,
    crashes: 0,
    pagesReplaced: 0,
    blockedRequests: 0,
    pageCrashRetries: 0,
  };
  #current: BrowserGeneration | undefined;
  #starting: Promise<BrowserGeneration> | undefined;
  #recycling: Promise<void> | undefined;
  readonly #retired = new Set<BrowserGeneration>();
  #sinkhole: Promise<NetworkSinkhole> | undefined;
  #sinkholeOpened: NetworkSinkhole | undefined;
  #closing = false;
  /** Aborted by close(): a launch under way stops at its next step instead of finishing first. */
  readonly #closed = new AbortController();

  constructor(
    private readonly options: SupervisorOptions,
    private readonly logger: Logger,
  ) {}

  /** The browser new renders go to, if one is up. */
  get current(): BrowserGeneration | undefined {
    return this.#current?.isLive ? this.#current : undefined;
  }

  /** Connections that reached the sinkhole (anything that slipped past interception and CSP). */
  sinkholeConnections(): number {
    return this.#sinkholeOpened?.connections() ?? 0;
  }

  /** The live browser, launching one if needed. */
  generation(): Promise<BrowserGeneration> {
    if (this.#current?.isLive) return Promise.resolve(this.#current);
    this.#starting ??= this.#launch()
      .then((generation) => {
        this.#current = generation;
        return generation;
      })
      .finally(() => {
        this.#starting = undefined;
      });
    return this.#starting;
  }

  /**
   * Runs `work` on a page slot of a live browser and gives the slot back. A renderer can die of causes
   * that are not this document's (killed from outside, the kernel's OOM killer, a Chromium fault), and
   * the crash event may arrive after this render took the page: so work whose page crashed is run once
   * more on fresh pages, and a document that crashes those too is at fault itself. The memory watch's
   * kills are the document's own memory: never retried, and answered DOCUMENT_TOO_LARGE.
   */
  async withSlot<T>(options: LeaseOptions, work: (lease: SlotLease) => Promise<T>): Promise<T> {
    const { signal, callerSignal } = options;
    const startedAt = performance.now();
    let generation = await raceSignal(this.generation(), signal);
    // A recycle may have retired it between the promise settling and now; take a slot only from a
    // live browser (checked and taken without an await in between).
    while (!generation.isLive) generation = await raceSignal(this.generation(), signal);
    generation.renders += 1;
    const releaseWatch = generation.watchRender();
    const slot = generation.takeSlot();
    const lease: SlotLease = {
      evaluator: async (s) => (await slot.ready(s)).evaluator,
      print: (html, params, o) => generation.print(html, params, { ...o, slot }),
      captureImage: (html, params, s) => generation.captureImage(html, params, s),
    };
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return await work(lease);
        } catch (error) {
          if (
            attempt > 1 ||
            signal.aborted ||
            !isPageCrash(error) ||
            !generation.isConnected ||
            generation.killedRendererSince(startedAt)
          )
            throw error;
          this.counters.pageCrashRetries += 1;
          this.logger.warn(
            { err: error },
            'a page of the render crashed before or while it was used; rendering once more on fresh pages',
          );
        }
      }
    } catch (error) {
      // Its page crashed because the memory watch killed the renderer: say so.
      if (!callerSignal?.aborted && generation.killedRendererSince(startedAt) && isCrash(error))
        throw tooMuchMemory(this.options.rendererMemoryMb);
      throw error;
    } finally {
      generation.returnSlot(slot);
      releaseWatch();
      this.#afterRender(generation);
    }
  }

  /** Called after every render: starts recycling once the current browser reached its quota. */
  #afterRender(generation: BrowserGeneration): void {
    if (generation !== this.#current || generation.renders < this.options.recycleAfterRenders) return;
    if (this.#recycling || this.#closing) return;
    this.#recycling = this.#launch()
      .then(async (next) => {
        if (this.#closing) return next.close();
        const old = this.#current;
        this.#current = next;
        if (old) {
          this.#retired.add(old);
          old.retire(); // closes itself once its in-flight renders are done
          await old.whenClosed();
          this.#retired.delete(old);
        }
      })
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'Chromium recycling failed; keeping the current browser');
      })
      .finally(() => {
        this.#recycling = undefined;
      });
  }

  /** Closes every browser and the sinkhole. */
  async close(): Promise<void> {
    this.#closing = true;
    // A launch takes seconds (much longer on a busy machine) and close() waits for it: without
    // this, a shutdown during start-up would wait for pages nobody will use, past its deadline.
    this.#closed.abort(new AppError('SERVICE_UNAVAILABLE', 'The renderer is shutting down'));
    await Promise.allSettled([this.#starting]);
    const generations = [this.#current, ...this.#retired].filter((g): g is BrowserGeneration => g !== undefined);
    this.#current = undefined;
    await Promise.all(generations.map((g) => g.close()));
    await Promise.allSettled([this.#recycling]);
    const sinkhole = await this.#sinkhole?.catch(() => undefined);
    await sinkhole?.close();
  }

  async #launch(): Promise<BrowserGeneration> {
    if (this.#closing) throw new AppError('SERVICE_UNAVAILABLE', 'The renderer is shutting down');
    this.#sinkhole ??= openNetworkSinkhole();
    const sinkhole = await this.#sinkhole;
    this.#sinkholeOpened = sinkhole;
    this.counters.launches += 1;
    try {
      return await BrowserGeneration.start(
        {
          id: this.counters.launches,
          executablePath: this.options.chromiumPath,
          sinkholePort: sinkhole.port,
          protocolTimeoutMs: protocolTimeoutMs(this.options),
          rendererMemoryMb: this.options.rendererMemoryMb,
          room: {
            assetResolver: this.options.assetResolver,
            logger: this.logger,
            onBlocked: () => {
              this.counters.blockedRequests += 1;
            },
          },
          logger: this.logger,
          onPageReplaced: () => {
            this.counters.pagesReplaced += 1;
          },
          onDisconnected: (generation) => this.#onCrash(generation),
        },
        this.options.concurrency,
        this.#closed.signal,
      );
    } catch (error) {
      if (this.#closed.signal.aborted) throw this.#closed.signal.reason;
      this.logger.error(
        { err: error, chromiumPath: this.options.chromiumPath },
        'Chromium failed to start; check PRESSROOM_CHROMIUM_PATH',
      );
      throw new AppError('RENDER_FAILED', 'The PDF renderer could not start', { cause: error });
    }
  }

  #onCrash(generation: BrowserGeneration): void {
    this.#retired.delete(generation);
    if (this.#current !== generation) return;
    this.counters.crashes += 1;
    this.#current = undefined;
    if (this.#closing) return;
    // Start the replacement now so readiness recovers without waiting for traffic.
    this.generation().catch(() => {
      // Logged in #launch; the next render tries again.
    });
  }
}

/** A failure that a crashed page (renderer killed) produces: RENDER_FAILED, or a stopped evaluator. */
function isCrash(error: unknown): boolean {
  if (!(error instanceof AppError)) return true;
  return error.code === 'RENDER_FAILED' || error.details?.reason === 'crashed';
}

/** The error of a page whose renderer process died (the evaluator's or the print page's). */
function isPageCrash(error: unknown): boolean {
  return error instanceof AppError && error.details?.reason === 'crashed';
}

/**
 * How long one DevTools command may take before puppeteer gives up on it: longer than any render
 * deadline, so that our own deadlines (the sync one and the longer one of jobs) always decide; this
 * only stops a command waiting for ever. (It was twice the sync deadline plus 30 s, 90 s by default:
 * a job printing a long document for more than that failed with a protocol timeout well within its
 * own 300 s.)
 */
export function protocolTimeoutMs(deadlines: { timeoutMs: number; asyncTimeoutMs: number }): number {
  return Math.max(deadlines.timeoutMs, deadlines.asyncTimeoutMs) * 2 + 30_000;
}
