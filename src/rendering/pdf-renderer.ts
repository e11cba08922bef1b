/**
 * The rendering engine: template + data → PDF, with one warm, supervised Chromium.
 *
 * A render: compile the templates in Node (cached; code is generated, never run here) → wait for a
 * slot (bounded queue) → evaluate them in the slot's sandboxed, locked-down evaluator page, in a fresh
 * SES Compartment (or a fresh Web Worker) → inject CSS → print on the slot's
 * reused, script-less print page (or, for a document with
 * a `<script>`, in a throwaway browser context) → PDF.
 *
 * Slots are shared fairly between accounts (../scheduling/fair-scheduler.ts, a work-conserving pool):
 * per-account and preview caps, documents before previews, and an account whose failed renders went
 * over its budget (../scheduling/failure-budget.ts) last. Compaction threads are a pool of their own.
 *
 * Supervision: Chromium starts on first use (or `warmUp()`); a crash is noticed through
 * `disconnected` and a new browser is started at once; after `recycleAfterRenders` renders a new
 * browser is started beside the old one, takes the new renders, and the old one closes when its
 * last render is done, so recycling fails nothing. The whole render has a deadline (`timeoutMs`):
 * a page that misses it is closed and replaced without holding up the other slots.
 * See `browser/sandbox/evaluator-page.ts` and `browser/pages/print-page.ts` for the isolation design.
 *
 * Bounds (`browser/pages/document-bounds.ts`, issue 15): decoded image pixels and PDF bytes are enforced
 * by the print step, pages here (Chromium prints at most `maxPages + 1`, and one more than the bound
 * fails the render), memory by the browser generation's watch; a render whose page crashed because
 * the watch killed its renderer fails with DOCUMENT_TOO_LARGE too, not RENDER_FAILED.
 */
import { rm } from 'node:fs/promises';
import type { Config } from '../shared/config.js';
import { AppError, isAppError } from '../shared/errors.js';
import { randomId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import type { BrowserGeneration } from '../browser/browser-generation.js';
import type { PageSlot } from '../browser/page-slot.js';
import { BrowserSupervisor } from '../browser/browser-supervisor.js';
import { raceSignal, timeoutSignal } from '../browser/cdp-helpers.js';
import type { StreamSpill } from '../browser/pages/spill-file.js';
import type { AssetResolver } from '../browser/pages/closed-room.js';
import { tooManyPages, tooMuchMemory } from '../browser/pages/document-bounds.js';
import { MAX_PAGE_LENGTH_INCHES } from './page-size.js';
import type { PrintParams } from '../browser/pages/print-page.js';
import { appendToBody, injectCss, needsScripts } from './html-assembly.js';
import { buildPrintParams, type PageSetup } from './pdf-options.js';
import { countPages } from '../pdf/pdf-page-count.js';
import { FailureBudget } from '../scheduling/failure-budget.js';
import { FairScheduler, type PoolStats, type Release, type Ticket } from '../scheduling/fair-scheduler.js';
import type { PdfFile, PrintedPdf } from '../pdf/pdf-file.js';
import {
  captureRenderedImage,
  IMAGE_CONTENT_TYPES,
  type ImageRenderRequest,
  type ImageRenderResult,
} from './image-renderer.js';
import type { CompiledParts } from '../browser/sandbox/evaluator-page.js';
import { compileTemplate } from '../template-language/compiler.js';
import type { TemplatePart } from '../template-language/syntax.js';
import type { DocumentResources } from '../browser/pages/closed-room.js';
import {
  createDocumentResources,
  uniqueAssetUrls,
  type AssetSource,
  type RemoteDocumentBounds,
} from './resources/document-resources.js';
import type { AssetPin } from '../assets/asset-revisions.js';
import { inlineHeaderFooter } from './resources/inline-header-footer.js';
import type { RemoteResourceFetcher } from './resources/remote-fetcher.js';
import { RenderWarnings } from './resources/render-warnings.js';
import type { DocumentWarning } from '../shared/document-warnings.js';

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
  readonly #budget: FailureBudget | undefined;
  readonly #browsers: BrowserSupervisor;
  #closing: Promise<void> | undefined;
  readonly #renders = { total: 0, failed: 0, pageCrashRetries: 0 };
  readonly #resources: Pick<RendererDependencies, 'assets' | 'remoteResources'> & { bounds: RemoteDocumentBounds };
  readonly #prepareTemplate: NonNullable<RendererDependencies['prepareTemplate']>;

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
      {
        ...options,
        assetResolver: dependencies.assetResolver,
        rendererMemoryMb: options.rendererMemoryMb,
      },
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
    const { maxDocumentBytes, maxImagePixels, maxPages } = this.options;
    const warnings = new RenderWarnings();
    let slotStartedAt = startedAt;
    // A failed render leaves no spilled file, whatever step failed (the page count, a retry on fresh pages…).
    const removeSpill = async (error: unknown): Promise<never> => {
      // The render's own error is the one to report, whatever the removal says.
      if (spill) await rm(spill.path, { force: true }).catch(() => {});
      throw error;
    };
    const printed = await this.#run(
      req,
      warnings,
      async ({ html, parts, generation, slot, signal, slotStartedAt: slotStarted, resources }) => {
        slotStartedAt = slotStarted;
        // Chromium's header and footer load nothing: their images and fonts go in as data: URIs.
        const header = await inlineHeaderFooter(parts.header, { part: 'header', documentHtml: html, resources });
        const footer = await inlineHeaderFooter(parts.footer, { part: 'footer', documentHtml: html, resources });
        const params = buildPrintParams({
          page: req.template.page,
          headerHtml: header.html,
          footerHtml: footer.html,
          maxPages,
          tagged: req.tagged,
        });
        const checkLength =
          req.mode === 'sync' ? (heightPx: number) => this.#refuseTooLong(heightPx, params, slotStarted) : undefined;
        const bounds = {
          maxDocumentBytes,
          maxImagePixels,
          maxPageInches: MAX_PAGE_LENGTH_INCHES,
          checkLength,
          spill: req.kind === 'preview' ? undefined : spill,
        };
        const document = appendToBody(html, header.preload + footer.preload);
        const pdf = await generation.print(document, params, {
          bounds,
          scripted: needsScripts(html),
          slot,
          signal,
          resources,
        });
        if ((await countPages(pdf)) > maxPages) throw tooManyPages(maxPages);
        return pdf;
      },
    ).catch(removeSpill);
    const pdf = printed;
    const now = performance.now();
    return {
      pdf,
      renderMs: now - startedAt,
      deadlineLeftMs: Math.max(0, this.#timeoutOf(req) - (now - slotStartedAt)),
      warnings: warnings.list(),
    };
  }

  #timeoutOf(req: RenderRequest): number {
    return req.mode === 'async' ? this.options.asyncTimeoutMs : this.options.timeoutMs;
  }

  /**
   * The early refusal of a synchronous request (docs/long-documents.md "Deadlines"): pages estimated
   * from the laid-out height (CSS px at 96 per inch) over the paper's printable height, times the
   * measured cost per page, against what is left of the deadline. The estimate errs low (the screen
   * layout is at least as wide as the printed one, so rarely taller), so a refused document would
   * not have made it; one that slips through still ends in RENDER_TIMEOUT.
   */
  #refuseTooLong(heightPx: number, params: PrintParams, slotStartedAt: number): void {
    const perPage = params.generateTaggedPDF
      ? this.options.printMsPerPage.tagged
      : this.options.printMsPerPage.untagged;
    if (perPage <= 0) return;
    const paperHeightIn = params.landscape ? (params.paperWidth ?? 8.27) : (params.paperHeight ?? 11.7);
    const printableIn = Math.max(1, paperHeightIn - (params.marginTop ?? 0) - (params.marginBottom ?? 0));
    const pages = Math.max(1, Math.ceil(heightPx / (printableIn * 96)));
    const estimateMs = pages * perPage;
    const leftMs = this.options.timeoutMs - (performance.now() - slotStartedAt);
    if (estimateMs <= leftMs) return;
    throw new AppError(
      'DOCUMENT_TOO_LONG_FOR_SYNC',
      `This document lays out to about ${pages} pages, which would take about ${Math.ceil(estimateMs / 1000)} s to print: more than the ` +
        `${Math.round(this.options.timeoutMs / 1000)} s a synchronous request may take. Send it to POST /v1/pdf/create-async ` +
        `(up to ${Math.round(this.options.asyncTimeoutMs / 1000)} s per document), or print it untagged (tagged: false), which is faster. Nothing was charged.`,
      { details: { estimatedPages: pages, estimatedPrintMs: estimateMs, endpoint: '/v1/pdf/create-async' } },
    );
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
    const { image, layerWarnings } = await this.#run(request, warnings, ({ html, generation, signal, resources }) =>
      captureRenderedImage(generation, html, req, signal, resources),
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
    return this.#run(req, new RenderWarnings(), async ({ html }) => html);
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
      accountsOverFailureBudget: this.#budget?.overBudgetCount() ?? 0,
      rendersTotal: this.#renders.total,
      rendersFailed: this.#renders.failed,
      pageCrashRetries: this.#renders.pageCrashRetries,
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

  /** Compile → slot → evaluate → assemble, then `finish` (print, or return the HTML). */
  async #run<T>(req: RenderRequest, warnings: RenderWarnings, finish: Finish<T>): Promise<T> {
    if (this.#closing) throw new AppError('SERVICE_UNAVAILABLE', 'The renderer is shutting down');
    // Cheap checks first, so a bad template never waits in the queue.
    const { template } = req;
    await this.#prepareTemplate({ accountId: req.accountId ?? '', kind: req.kind === 'preview' ? 'free' : 'paid' }, [
      template.html,
      template.css,
      template.page?.header_html,
      template.page?.footer_html,
    ]);
    const parts = compileParts(req.template);
    buildPrintParams({ page: req.template.page, headerHtml: undefined, footerHtml: undefined });
    const dataJson = toJson(req.data);
    const accountId = req.accountId ?? '';
    const kind = req.kind ?? 'document';
    const release = await this.#slots.acquire(
      { accountId, kind: kind === 'preview' ? 'free' : 'paid' },
      { maxWaitMs: this.options.timeoutMs, signal: req.signal },
    );
    this.#renders.total += 1;
    return this.#runOnPermit(req, release, { parts, dataJson, accountId, warnings }, finish);
  }

  /** Runs the render on the slot `release` grants, and releases it. */
  async #runOnPermit<T>(
    req: RenderRequest,
    release: Release,
    prepared: Pick<RunState, 'parts' | 'dataJson' | 'accountId' | 'warnings'>,
    finish: Finish<T>,
  ): Promise<T> {
    const { accountId } = prepared;
    const timeoutMs = this.#timeoutOf(req);
    // A synchronous request too long even to lay out before the deadline never reaches the estimate: point it the right way too.
    const hint = req.mode === 'sync' ? '; for long documents use POST /v1/pdf/create-async' : '';
    const renderTimeout = () =>
      new AppError('RENDER_TIMEOUT', `The document did not render within ${timeoutMs} ms${hint}`);
    const deadline = timeoutSignal(timeoutMs, renderTimeout);
    const signal = AbortSignal.any([req.signal, deadline.signal].filter((s): s is AbortSignal => s !== undefined));
    const startedAt = performance.now();
    const progress = new RenderProgress(startedAt);
    let generation: BrowserGeneration | undefined;
    let releaseWatch = () => {};
    try {
      generation = await raceSignal(this.#browsers.generation(), signal);
      // A recycle may have retired it between the promise settling and now; take a slot only from a
      // live browser (checked and taken without an await in between).
      while (!generation.isLive) generation = await raceSignal(this.#browsers.generation(), signal);
      generation.renders += 1;
      releaseWatch = generation.watchRender();
      const slot = generation.takeSlot();
      progress.enter('pages');
      try {
        // A renderer can die of causes that are not this document's (killed from outside, the
        // kernel's OOM killer, a Chromium fault), and Pressroom learns of it only when the crash
        // event arrives: possibly after this render took the page. So a render whose page crashed
        // is tried once more on fresh pages; a document that crashes those too is at fault itself.
        // The memory watch's kills are excluded: those are the documents' own memory.
        for (let attempt = 1; ; attempt++) {
          try {
            return await this.#renderOnSlot(
              req,
              slot,
              generation,
              { ...prepared, signal, startedAt, timeoutMs, renderTimeout, progress },
              finish,
            );
          } catch (error) {
            if (
              attempt > 1 ||
              signal.aborted ||
              !isPageCrash(error) ||
              !generation.isConnected ||
              generation.killedRendererSince(startedAt)
            )
              throw error;
            this.#renders.pageCrashRetries += 1;
            this.logger.warn(
              { err: error },
              'a page of the render crashed before or while it was used; rendering once more on fresh pages',
            );
          }
        }
      } finally {
        generation.returnSlot(slot);
      }
    } catch (error) {
      this.#renders.failed += 1;
      // A render that ran out of time answers RENDER_TIMEOUT and nothing more; the operator's log says where it was.
      if ((deadline.signal.aborted || isAppError(error, 'RENDER_TIMEOUT')) && !req.signal?.aborted) {
        this.logger.warn(
          { accountId, mode: req.mode ?? 'sync', timeoutMs, ...progress.summary() },
          'a render ran out of time',
        );
      }
      // Failures are free of charge, so they count against the account's failure budget instead.
      if (!req.signal?.aborted) this.#budget?.recordFailure(accountId, performance.now() - startedAt);
      // Its page crashed because the memory watch killed the renderer: say so.
      if (!req.signal?.aborted && generation?.killedRendererSince(startedAt) && isCrash(error))
        throw tooMuchMemory(this.options.rendererMemoryMb);
      throw this.#clientError(error, req.signal);
    } finally {
      releaseWatch();
      deadline.clear();
      release();
      if (generation) this.#browsers.afterRender(generation);
    }
  }

  /** One attempt on a slot's pages: evaluate, assemble, then `finish`. */
  async #renderOnSlot<T>(
    req: RenderRequest,
    slot: PageSlot,
    generation: BrowserGeneration,
    run: RunState,
    finish: Finish<T>,
  ): Promise<T> {
    const { signal, startedAt, timeoutMs, progress } = run;
    const { evaluator } = await slot.ready(signal);
    progress.enter('template');
    const remainingMs = timeoutMs - (performance.now() - startedAt);
    const templateMs = Math.max(1, Math.min(this.options.templateTimeoutMs, remainingMs));
    const limits = {
      timeoutMs: templateMs,
      limitChars: this.options.templateOutputLimitBytes,
      limitBytes: this.options.templateOutputLimitBytes,
      signal,
      strict: req.template.strict === true,
    };
    const evaluated = await evaluator.evaluate(run.parts, run.dataJson, limits).catch((error: unknown) => {
      // When the render deadline, not the template limit, was the binding one, say so.
      throw isAppError(error, 'TEMPLATE_TIMEOUT') && templateMs < this.options.templateTimeoutMs
        ? run.renderTimeout()
        : error;
    });
    for (const warning of evaluated.warnings) run.warnings.add(warning);
    // The css is a template too (issue 13), evaluated with the same data.
    const html = uniqueAssetUrls(injectCss(evaluated.html.main ?? '', evaluated.html.css), randomId(12));
    const evaluatedAt = performance.now();
    progress.enter('print', html.length);
    const resources = createDocumentResources({
      accountId: run.accountId,
      pin: req.template.assets,
      warnings: run.warnings,
      assets: this.#resources.assets,
      remote: this.#resources.remoteResources,
      bounds: this.#resources.bounds,
    });
    const result = await finish({
      html,
      parts: evaluated.html,
      generation,
      slot,
      signal,
      slotStartedAt: startedAt,
      resources,
    });
    this.logger.debug(
      {
        evalMs: round(evaluatedAt - startedAt),
        sandboxMs: round(evaluated.evalMs),
        finishMs: round(performance.now() - evaluatedAt),
        htmlChars: html.length,
      },
      'document rendered',
    );
    return result;
  }

  #clientError(error: unknown, callerSignal: AbortSignal | undefined): unknown {
    if (callerSignal?.aborted && error === callerSignal.reason) return error;
    if (error instanceof AppError) return error;
    this.logger.warn({ err: error }, 'render failed');
    return new AppError('RENDER_FAILED', 'The document could not be rendered', { cause: error });
  }
}

/** What the last step of a render gets: the assembled document, and where and under which deadline it runs. */
interface Assembled {
  /** The document with its CSS in place. */
  html: string;
  /** Each evaluated part (`main`, `css`, `header`, `footer`). */
  parts: Record<string, string>;
  generation: BrowserGeneration;
  slot: PageSlot;
  signal: AbortSignal;
  /** When the render got its slot (performance.now()): the deadline counts from it. */
  slotStartedAt: number;
  resources: DocumentResources;
}

/** The last step of a render: print the assembled HTML, capture it, or hand it back. */
type Finish<T> = (assembled: Assembled) => Promise<T>;

function compileParts(template: RenderTemplate): CompiledParts {
  const parts: CompiledParts = { main: compilePart(template.html, 'html') };
  if (template.css && template.css.trim() !== '') parts.css = compilePart(template.css, 'css');
  for (const part of ['header', 'footer'] as const) {
    const source = template.page?.[`${part}_html`];
    if (source && source.trim() !== '') parts[part] = compilePart(source, part);
  }
  return parts;
}

/** Compiles one part; its syntax error names the part (`details.part`, and `page.header_html: …` in the message). */
function compilePart(source: string, part: TemplatePart): string {
  try {
    return compileTemplate(source, part === 'html' ? 'main' : part);
  } catch (error) {
    if (!isAppError(error)) throw error;
    const prefix = part === 'html' ? '' : part === 'css' ? 'css: ' : `page.${part}_html: `;
    throw new AppError(error.code, `${prefix}${error.message}`, {
      cause: error.options.cause,
      details: { ...error.details, part },
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

/** What one render carries from its start into each attempt on a slot. */
interface RunState {
  parts: CompiledParts;
  dataJson: string;
  accountId: string;
  warnings: RenderWarnings;
  signal: AbortSignal;
  startedAt: number;
  timeoutMs: number;
  renderTimeout: () => AppError;
  progress: RenderProgress;
}

/**
 * Where a render is, for the log line of one that ran out of time: waiting for a browser, for its
 * slot's pages, in the template, or printing (loading the document, printing it, reading the PDF,
 * compacting and storing it).
 */
type RenderStage = 'browser' | 'pages' | 'template' | 'print';

class RenderProgress {
  #stage: RenderStage = 'browser';
  #stageStartedAt: number;
  #htmlChars: number | undefined;

  constructor(private readonly startedAt: number) {
    this.#stageStartedAt = startedAt;
  }

  enter(stage: Exclude<RenderStage, 'browser'>, htmlChars?: number): void {
    this.#stage = stage;
    this.#stageStartedAt = performance.now();
    if (htmlChars !== undefined) this.#htmlChars = htmlChars;
  }

  summary(): { stage: RenderStage; stageMs: number; elapsedMs: number; htmlChars?: number } {
    const now = performance.now();
    return {
      stage: this.#stage,
      stageMs: round(now - this.#stageStartedAt),
      elapsedMs: round(now - this.startedAt),
      htmlChars: this.#htmlChars,
    };
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function toJson(data: unknown): string {
  try {
    return JSON.stringify(data ?? {}) ?? '{}';
  } catch (error) {
    throw new AppError('INVALID_REQUEST', 'data must be JSON (no cycles, no BigInt)', { cause: error });
  }
}
