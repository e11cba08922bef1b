/**
 * Keeps one live Chromium (a `BrowserGeneration`) available:
 *   - launches lazily, one launch at a time, or on `warmUp()`;
 *   - on a crash (`disconnected`) drops it and starts a replacement at once, so readiness recovers
 *     without waiting for traffic (renders in flight on the crashed browser fail; queued ones wait);
 *   - after `recycleAfterRenders` renders starts a new browser beside the old one, switches new
 *     renders to it, and lets the old one close when its last in-flight render returns its slot —
 *     recycling never fails a render.
 * One network sinkhole serves every generation.
 */
import { AppError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { BrowserGeneration } from './browser-generation.js';
import type { AssetResolver } from './pages/closed-room.js';
import { openNetworkSinkhole, type NetworkSinkhole } from './pages/network-sinkhole.js';

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
}

export class BrowserSupervisor {
  readonly counters: SupervisorCounters = { launches: 0, crashes: 0, pagesReplaced: 0, blockedRequests: 0 };
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

  /** Called after every render: starts recycling once the current browser reached its quota. */
  afterRender(generation: BrowserGeneration): void {
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
