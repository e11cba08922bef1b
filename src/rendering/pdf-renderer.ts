/**
 * The rendering engine's facade: template + data → PDF (or image, or the HTML), with one warm,
 * supervised Chromium. A render reads top to bottom in `#run`:
 *
 *   compile (Node, cached; code is generated, never run here; render-steps.ts)
 *   → admit (a fair render slot: ../scheduling/fair-scheduler.ts, a work-conserving pool; per-account
 *     and preview caps, documents before previews, an account over its failure budget last)
 *   → lease a page slot of a live browser (../browser/browser-supervisor.ts `withSlot`: the browser's
 *     memory watch, the retry on fresh pages after a crash)
 *   → evaluate (the slot's sandboxed evaluator page, a fresh SES Compartment per document)
 *   → assemble (CSS in, asset URLs made unique, the document's resources)
 *   → print (the slot's script-less print page, or a throwaway context for a document with a
 *     `<script>`) or capture an image, or hand the HTML back
 *   → on failure: the failure budget, the timeout's log line, and the error the client reads.
 *
 * The whole render has a deadline (`timeoutMs`, `asyncTimeoutMs` for jobs), counted from its slot.
 * Bounds (`browser/pages/document-bounds.ts`): decoded image pixels and PDF bytes are enforced by the
 * print, pages by the print step (Chromium prints at most `maxPages + 1`), memory by the browser's watch.
 */
import { rm } from 'node:fs/promises';
import { BrowserSupervisor, type SlotLease } from '../browser/browser-supervisor.js';
import { timeoutSignal } from '../browser/cdp-helpers.js';
import type { AssetResolver } from '../browser/pages/closed-room.js';
import type { StreamSpill } from '../browser/pages/spill-file.js';
import type { PrintedPdf } from '../pdf/pdf-file.js';
import { FailureBudget } from '../scheduling/failure-budget.js';
import { FairScheduler, type PoolStats, type Release, type Ticket } from '../scheduling/fair-scheduler.js';
import type { Config } from '../shared/config.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import { AppError, isAppError, ValidationError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { AssetPin } from '../assets/asset-revisions.js';
import {
  captureRenderedImage,
  IMAGE_CONTENT_TYPES,
  type ImageRenderRequest,
  type ImageRenderResult,
} from './image-renderer.js';
import type { PageSetup } from './pdf-options.js';
import { PrintRates } from './print-rates.js';
import { RenderProgress, roundMs } from './render-progress.js';
import {
  type Assembled,
  assembleDocument,
  compileParts,
  evaluateParts,
  printDocument,
  type RenderRun,
  type ResourceSources,
} from './render-steps.js';
import type { AssetSource, RemoteDocumentBounds } from './resources/document-resources.js';
import type { RemoteResourceFetcher } from './resources/remote-fetcher.js';
import { RenderWarnings } from './resources/render-warnings.js';

export type { AssetResolver } from '../browser/pages/closed-room.js';
export { boundOf, type DocumentBound } from '../browser/pages/document-bounds.js';
export type { PdfFile, PrintedPdf } from '../pdf/pdf-file.js';

/** Documents (sync and jobs) are paid for; previews are free and go last (the scheduler's `paid` and `free`). */
export type RenderKind = 'document' | 'preview';

export type { PageSetup };

/** A stored template as the engine needs it. */
export interface RenderTemplate {
  html: string;
  css?: string | null;
  page?: PageSetup | null;
  /**
   * The template's strict mode (docs/templates.md "Strict mode and warnings"): an undefined variable,
   * or a text where a number or date belongs, fails the render with TEMPLATE_RENDER_ERROR naming it
   * instead of being a warning. @defaultValue false
   */
  strict?: boolean;
  /** The asset revisions a version was published with (docs/assets.md#revisions). @defaultValue the newest (the draft's) */
  assets?: AssetPin | null;
}

/** One document to render. */
export interface RenderRequest {
  template: RenderTemplate;
  data: unknown;
  /** aborts the render */
  signal?: AbortSignal;
  /** Who asks: render slots are shared fairly between accounts. Renders without one share the account `''`. */
  accountId?: string;
  /** Documents (sync and jobs) go before previews, which are stamped after printing (finishing/). @defaultValue `'document'` */
  kind?: RenderKind;
  /** Overrides the template's `page.tagged` (a create request's `tagged`). @defaultValue the template's, else true */
  tagged?: boolean;
  /** PDF/UA: printed tagged, after the template's language, title and alternative texts are checked (print-page.ts). */
  accessible?: boolean;
  /**
   * `sync` (POST /v1/pdf/create): refused early with DOCUMENT_TOO_LONG_FOR_SYNC when, after layout, the
   * document is estimated to print past the deadline. `async` (a job): the longer `asyncTimeoutMs`
   * deadline, no estimate. Absent (previews, engine callers): `timeoutMs`, no estimate.
   */
  mode?: 'sync' | 'async';
}

/** Where `renderSpilling` writes a long PDF: to `path`, once `aboveBytes` of it have come from Chromium. */
export type PdfSpill = StreamSpill;

/** The PDF, how long the whole render took (queueing included), and what it warned about. */
export interface RenderResult<P extends PrintedPdf = Buffer> {
  /** In memory; from `renderSpilling`, a file when the PDF was long. */
  pdf: P;
  renderMs: number;
  /** What is left of the render deadline (`timeoutMs`, counted from the slot): the budget of the steps after printing, such as compaction. */
  deadlineLeftMs: number;
  /** Resources that did not load, and whatever else the render noticed (issue 13); empty when none. */
  warnings: DocumentWarning[];
}

/** Counters for health checks and metrics. */
export interface RendererStats {
  ready: boolean;
  browserPid: number | undefined;
  /** Browsers launched so far (first launch, crash replacements and recycling). */
  launches: number;
  crashes: number;
  concurrency: number;
  active: number;
  queued: number;
  /** Renders waiting, per account that has any. */
  queuedByAccount: Map<string, number>;
  /** Accounts whose failed render time is over their budget now. */
  accountsOverFailureBudget: number;
  rendersTotal: number;
  rendersFailed: number;
  /** Renders tried once more on fresh pages because a page renderer had crashed. */
  pageCrashRetries: number;
  /** The render slots' and the compaction threads' pools: tasks holding a slot and waiting for one. */
  pools: PoolStats[];
  rendersSinceLaunch: number;
  pagesReplaced: number;
  /** Requests refused by interception, and connections that reached the proxy sinkhole. */
  blockedRequests: number;
  sinkholeConnections: number;
}

/** The engine's interface; the only way the rest of the service reaches Chromium. */
export interface PdfRenderer {
  render(req: RenderRequest): Promise<RenderResult>;
  /**
   * `render` for a document whose PDF may be long: once `spill.aboveBytes` of it have come from
   * Chromium, it is written to `spill.path` as it arrives instead of held in memory, and the result's
   * `pdf` is that file, for the caller to remove (removed here only when the render fails).
   */
  renderSpilling(req: RenderRequest, spill: PdfSpill): Promise<RenderResult<PrintedPdf>>;
  /** Template → PNG/JPEG/WebP through the same queue, sandbox and closed room (image-renderer.ts). */
  renderImage(req: ImageRenderRequest): Promise<ImageRenderResult>;
  /** Evaluates the templates only and returns the HTML that would be printed (studio preview, tests). */
  renderHtml(req: RenderRequest): Promise<string>;
  /** Starts Chromium and opens all page slots now instead of on the first render. */
  warmUp(): Promise<void>;
  /** readiness: browser up */
  isReady(): boolean;
  stats(): RendererStats;
  close(): Promise<void>;
}

/** Extra wiring, and the fair-share policy. */
export interface RendererDependencies {
  /** Serves `https://assets.pressroom.internal/…` to templates; without it that origin is blocked too. */
  assetResolver?: AssetResolver;
  /** The render's account's assets (`asset()` URLs); without it every asset URL is a warning. */
  assets?: AssetSource;
  /** Fetches remote images, fonts and stylesheets; without it every remote URL is a warning. */
  remoteResources?: RemoteResourceFetcher;
  /** Per-document bounds on remote resources (`config.remoteResources`). */
  remoteBounds: RemoteDocumentBounds;
  /** How slots are shared between accounts (`config.renderFairness`). */
  fairness: Config['renderFairness'];
  /** Compiles a template's long parts off the event loop before they are compiled here (templates/template-threads.ts); without it they compile here. */
  prepareTemplate?: (ticket: Ticket, sources: readonly (string | null | undefined)[]) => Promise<void>;
}

/** Creates the renderer; Chromium starts lazily (or on `warmUp()`). */
export function createPdfRenderer(
  options: Config['rendering'],
  logger: Logger,
  dependencies: RendererDependencies,
): PdfRenderer {
  return new ChromiumPdfRenderer(options, logger, dependencies);
}

class ChromiumPdfRenderer implements PdfRenderer {
  readonly #slots: FairScheduler;
  readonly #budget: FailureBudget;
  readonly #browsers: BrowserSupervisor;
  #closing: Promise<void> | undefined;
  readonly #renders = { total: 0, failed: 0 };
  readonly #resources: ResourceSources;
  readonly #prepareTemplate: NonNullable<RendererDependencies['prepareTemplate']>;
  readonly #printRates: PrintRates;

  constructor(
    private readonly options: Config['rendering'],
    private readonly logger: Logger,
    dependencies: RendererDependencies,
  ) {
    this.#resources = {
      assets: dependencies.assets,
      remoteResources: dependencies.remoteResources,
      bounds: dependencies.remoteBounds,
    };
    this.#prepareTemplate = dependencies.prepareTemplate ?? (async () => {});
    this.#printRates = new PrintRates(options.printMsPerPage);
    const fairness = dependencies.fairness;
    this.#budget = new FailureBudget({
      budgetSeconds: fairness.failureBudgetSeconds,
      windowSeconds: fairness.failureWindowSeconds,
    });
    this.#slots = new FairScheduler({
      name: 'render',
      limits: {
        capacity: options.concurrency,
        queueLimit: options.queueLimit,
        accountSlots: fairness.accountSlots,
        workConserving: true,
        freeSlots: fairness.previewSlots,
        accountQueueLimit: fairness.accountQueueLimit,
        accountFreeQueueLimit: fairness.accountPreviewQueueLimit,
      },
      words: { task: 'render', freeTask: 'preview', slot: 'render slot' },
      busy: (reason) =>
        new AppError('RENDERER_BUSY', 'The renderer is busy; retry shortly', {
          details: { retryAfterSeconds: 2, reason },
        }),
      budget: this.#budget,
    });
    this.#browsers = new BrowserSupervisor(
      { ...options, assetResolver: dependencies.assetResolver, rendererMemoryMb: options.rendererMemoryMb },
      logger,
    );
  }

  async render(req: RenderRequest): Promise<RenderResult> {
    const result = await this.renderSpilling(req, undefined);
    // Nothing spills without a spill target.
    if (!Buffer.isBuffer(result.pdf)) throw new Error('a render without a spill target returned a file');
    return result as RenderResult;
  }

  async renderSpilling(req: RenderRequest, spill: PdfSpill | undefined): Promise<RenderResult<PrintedPdf>> {
    const startedAt = performance.now();
    const warnings = new RenderWarnings();
    let slotStartedAt = startedAt;
    const request = {
      page: req.template.page,
      tagged: req.accessible ? true : req.tagged,
      accessible: req.accessible === true,
      sync: req.mode === 'sync',
      spill: req.kind === 'preview' ? undefined : spill,
    };
    const pdf = await this.#run(req, warnings, (lease, document) => {
      slotStartedAt = document.run.startedAt;
      return printDocument(lease, document, { request, options: this.options, rates: this.#printRates });
    }).catch(async (error: unknown): Promise<never> => {
      // A failed render leaves no spilled file, whatever step failed; its own error is the one to report.
      if (spill) await rm(spill.path, { force: true }).catch(() => {});
      throw error;
    });
    const now = performance.now();
    return {
      pdf,
      renderMs: now - startedAt,
      deadlineLeftMs: Math.max(0, this.#timeoutOf(req) - (now - slotStartedAt)),
      warnings: warnings.list(),
    };
  }

  async renderImage(req: ImageRenderRequest): Promise<ImageRenderResult> {
    const startedAt = performance.now();
    const request: RenderRequest = {
      template: {
        html: req.template.html,
        css: req.template.css,
        strict: req.template.strict,
        assets: req.template.assets,
      },
      data: req.data,
      signal: req.signal,
      accountId: req.accountId,
      kind: 'document',
    };
    const warnings = new RenderWarnings();
    const { image, layerWarnings } = await this.#run(request, warnings, (lease, { html, run, resources }) =>
      captureRenderedImage(lease, req, { html, signal: run.signal, resources }),
    );
    return {
      image,
      contentType: IMAGE_CONTENT_TYPES[req.output.format],
      renderMs: performance.now() - startedAt,
      warnings: warnings.list(),
      layerWarnings,
    };
  }

  renderHtml(req: RenderRequest): Promise<string> {
    return this.#run(req, new RenderWarnings(), async (_lease, { html }) => html);
  }

  async warmUp(): Promise<void> {
    const generation = await this.#browsers.generation();
    await generation.prewarm(this.options.concurrency);
  }

  isReady(): boolean {
    return !this.#closing && this.#browsers.current !== undefined;
  }

  stats(): RendererStats {
    const current = this.#browsers.current;
    return {
      ready: this.isReady(),
      browserPid: current?.pid,
      ...this.#browsers.counters,
      concurrency: this.options.concurrency,
      active: this.#slots.active,
      queued: this.#slots.waiting,
      queuedByAccount: this.#slots.waitingByAccount(),
      accountsOverFailureBudget: this.#budget.overBudgetCount(),
      rendersTotal: this.#renders.total,
      rendersFailed: this.#renders.failed,
      pools: [this.#slots.stats()],
      rendersSinceLaunch: current?.renders ?? 0,
      sinkholeConnections: this.#browsers.sinkholeConnections(),
    };
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#slots.refuseAll(new AppError('SERVICE_UNAVAILABLE', 'The renderer is shutting down'));
      await this.#browsers.close();
    })();
    return this.#closing;
  }

  /** One render, step by step: compile → admit → lease a slot → evaluate → assemble → `finish` (or fail). */
  async #run<T>(req: RenderRequest, warnings: RenderWarnings, finish: Finish<T>): Promise<T> {
    if (this.#closing) throw new AppError('SERVICE_UNAVAILABLE', 'The renderer is shutting down');
    // Cheap checks first, so a bad template never waits in the queue.
    const parts = await this.#compile(req);
    const dataJson = toJson(req.data);
    const release = await this.#admit(req);
    const run = this.#startClock(req, { parts, dataJson, warnings });
    try {
      return await this.#browsers.withSlot({ signal: run.signal, callerSignal: req.signal }, async (lease) => {
        const evaluated = await evaluateParts(lease, run, this.options);
        const document = assembleDocument(evaluated, run, this.#resources);
        const result = await finish(lease, { ...document, run });
        this.logger.debug(
          { elapsedMs: roundMs(performance.now() - run.startedAt), htmlChars: document.html.length },
          'document rendered',
        );
        return result;
      });
    } catch (error) {
      throw this.#fail(req, run, error);
    } finally {
      run.clear();
      release();
    }
  }

  /** Compile: long parts on the template threads first (their results cached), then every part here. */
  async #compile(req: RenderRequest) {
    const { template } = req;
    await this.#prepareTemplate(ticketOf(req), [
      template.html,
      template.css,
      template.page?.header_html,
      template.page?.footer_html,
    ]);
    return compileParts(template);
  }

  /** Admit: a render slot, shared fairly between accounts; waits at most the sync deadline. */
  async #admit(req: RenderRequest): Promise<Release> {
    const release = await this.#slots.acquire(ticketOf(req), { maxWaitMs: this.options.timeoutMs, signal: req.signal });
    this.#renders.total += 1;
    return release;
  }

  /** The render's deadline starts with its slot. */
  #startClock(
    req: RenderRequest,
    prepared: Pick<RenderRun, 'parts' | 'dataJson' | 'warnings'>,
  ): RenderRun & { clear(): void; deadline: AbortSignal } {
    const timeoutMs = this.#timeoutOf(req);
    // A synchronous request too long even to lay out before the deadline never reaches the estimate: point it the right way too.
    const hint = req.mode === 'sync' ? '; for long documents use POST /v1/pdf/create-async' : '';
    const renderTimeout = () =>
      new AppError('RENDER_TIMEOUT', `The document did not render within ${timeoutMs} ms${hint}`);
    const deadline = timeoutSignal(timeoutMs, renderTimeout);
    const startedAt = performance.now();
    return {
      ...prepared,
      accountId: req.accountId ?? '',
      signal: AbortSignal.any([req.signal, deadline.signal].filter((s): s is AbortSignal => s !== undefined)),
      deadline: deadline.signal,
      clear: deadline.clear,
      startedAt,
      timeoutMs,
      renderTimeout,
      progress: new RenderProgress(startedAt),
      strict: req.template.strict === true,
      pin: req.template.assets,
    };
  }

  /** Fail: counted, charged to the account's failure budget, logged when out of time; the error the client reads. */
  #fail(req: RenderRequest, run: RenderRun & { deadline: AbortSignal }, error: unknown): unknown {
    this.#renders.failed += 1;
    const stopped = req.signal?.aborted === true;
    // A render that ran out of time answers RENDER_TIMEOUT and nothing more; the operator's log says where it was.
    if ((run.deadline.aborted || isAppError(error, 'RENDER_TIMEOUT')) && !stopped) {
      this.logger.warn(
        { accountId: run.accountId, mode: req.mode ?? 'sync', timeoutMs: run.timeoutMs, ...run.progress.summary() },
        'a render ran out of time',
      );
    }
    // Failures are free of charge, so they count against the account's failure budget instead.
    if (!stopped) this.#budget.recordFailure(run.accountId, performance.now() - run.startedAt);
    if (stopped && error === req.signal?.reason) return error;
    // A refusal the page found (PDF/UA's survey, print-page.ts) is the template's, answered as a 422.
    if (error instanceof AppError || error instanceof ValidationError) return error;
    this.logger.warn({ err: error }, 'render failed');
    return new AppError('RENDER_FAILED', 'The document could not be rendered', { cause: error });
  }

  #timeoutOf(req: RenderRequest): number {
    return req.mode === 'async' ? this.options.asyncTimeoutMs : this.options.timeoutMs;
  }
}

/** The last step of a render, on its leased slot: print the assembled document, capture it, or hand it back. */
type Finish<T> = (lease: SlotLease, document: Assembled & { run: RenderRun }) => Promise<T>;

function ticketOf(req: RenderRequest): Ticket {
  return { accountId: req.accountId ?? '', kind: req.kind === 'preview' ? 'free' : 'paid' };
}

function toJson(data: unknown): string {
  try {
    return JSON.stringify(data ?? {}) ?? '{}';
  } catch (error) {
    throw new AppError('INVALID_REQUEST', 'data must be JSON (no cycles, no BigInt)', { cause: error });
  }
}
