/**
 * The rendering engine: template + data → PDF, with one warm, supervised Chromium.
 *
 * A render: compile the templates in Node (cached; code is generated, never run here) → wait for a
 * slot (bounded queue) → evaluate them in the slot's sandboxed, locked-down evaluator page, in a fresh
 * SES Compartment (or a fresh Web Worker) → inject CSS → print on the slot's
 * reused, script-less print page (or, for a document with
 * a `<script>`, in a throwaway browser context) → PDF.
 *
 * Slots are shared fairly between accounts (render-queue.ts): per-account and preview caps, documents
 * before previews, and an account whose failed renders went over its budget (failure-budget.ts) last.
 *
 * Supervision: Chromium starts on first use (or `warmUp()`); a crash is noticed through
 * `disconnected` and a new browser is started at once; after `recycleAfterRenders` renders a new
 * browser is started beside the old one, takes the new renders, and the old one closes when its
 * last render is done, so recycling fails nothing. The whole render has a deadline (`timeoutMs`):
 * a page that misses it is closed and replaced without holding up the other slots.
 * See `sandbox/evaluator-page.ts` and `chromium/print-page.ts` for the isolation design.
 *
 * Bounds (`chromium/document-bounds.ts`, issue 15): decoded image pixels and PDF bytes are enforced
 * by the print step, pages here (Chromium prints at most `maxPages + 1`, and one more than the bound
 * fails the render), memory by the browser generation's watch; a render whose page crashed because
 * the watch killed its renderer fails with DOCUMENT_TOO_LARGE too, not RENDER_FAILED.
 */
import type { Config } from '../config.js';
import { AppError, isAppError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { BrowserGeneration } from './browser-generation.js';
import { BrowserSupervisor } from './browser-supervisor.js';
import { raceSignal, timeoutSignal } from './chromium/cdp-helpers.js';
import type { AssetResolver } from './chromium/closed-room.js';
import { tooManyPages, tooMuchMemory } from './chromium/document-bounds.js';
import type { PrintPage } from './chromium/print-page.js';
import { injectCss, needsScripts } from './html-assembly.js';
import { buildPrintParams } from './pdf-options.js';
import { countPages } from './pdf-page-count.js';
import { FailureBudget } from './failure-budget.js';
import { captureRenderedImage, IMAGE_CONTENT_TYPES, type ImageRenderRequest, type ImageRenderResult } from './image-renderer.js';
import { stampPreview } from './preview-stamp.js';
import { RenderQueue, type RenderKind } from './render-queue.js';
import type { CompiledParts } from './sandbox/evaluator-page.js';
import { compileTemplate } from './template-compiler.js';

export type { AssetResolver } from './chromium/closed-room.js';
export { boundOf, type DocumentBound } from './chromium/document-bounds.js';
export type { RenderKind } from './render-queue.js';

/** Paper, margins and running header/footer (both are templates, see `pageNumber`/`totalPages`). */
export interface PageSetup {
  format?: 'A4' | 'Letter' | 'Legal' | 'A3' | 'A5';
  orientation?: 'portrait' | 'landscape';
  margin?: { top?: string; right?: string; bottom?: string; left?: string };
  header_html?: string;
  footer_html?: string;
}

/** A stored template as the engine needs it. */
export interface RenderTemplate {
  html: string;
  css?: string | null;
  page?: PageSetup | null;
}

/** One document to render. */
export interface RenderRequest {
  template: RenderTemplate;
  data: unknown;
  /** aborts the render */
  signal?: AbortSignal;
  /** stamp "PREVIEW" on every page of the printed PDF (preview-stamp.ts) */
  preview?: boolean;
  /** Who asks: render slots are shared fairly between accounts. Renders without one share the account `''`. */
  accountId?: string;
  /** Documents (sync and jobs) go before previews. @defaultValue `'preview'` when `preview` is set, else `'document'` */
  kind?: RenderKind;
}

/** The PDF and how long the whole render took (queueing included). */
export interface RenderResult {
  pdf: Buffer;
  renderMs: number;
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
  rendersSinceLaunch: number;
  pagesReplaced: number;
  /** Requests refused by interception, and connections that reached the proxy sinkhole. */
  blockedRequests: number;
  sinkholeConnections: number;
}

/** The engine's interface; the only way the rest of the service reaches Chromium. */
export interface PdfRenderer {
  render(req: RenderRequest): Promise<RenderResult>;
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
  /**
   * How slots are shared between accounts (`config.renderFairness`). Without it (engine tests) no
   * account or preview cap applies and no failure budget is kept; the order still puts documents first.
   */
  fairness?: Config['renderFairness'];
}

/** Creates the renderer; Chromium starts lazily (or on `warmUp()`). */
export function createPdfRenderer(options: Config['rendering'], logger: Logger, dependencies: RendererDependencies = {}): PdfRenderer {
  return new ChromiumPdfRenderer(options, logger, dependencies);
}

class ChromiumPdfRenderer implements PdfRenderer {
  readonly #queue: RenderQueue;
  readonly #budget: FailureBudget | undefined;
  readonly #browsers: BrowserSupervisor;
  #closing: Promise<void> | undefined;
  readonly #renders = { total: 0, failed: 0 };

  constructor(
    private readonly options: Config['rendering'],
    private readonly logger: Logger,
    dependencies: RendererDependencies,
  ) {
    const fairness = dependencies.fairness;
    this.#budget = fairness && new FailureBudget({ budgetSeconds: fairness.failureBudgetSeconds, windowSeconds: fairness.failureWindowSeconds });
    this.#queue = new RenderQueue({
      capacity: options.concurrency,
      queueLimit: options.queueLimit,
      accountSlots: fairness?.accountSlots ?? options.concurrency,
      previewSlots: fairness?.previewSlots ?? options.concurrency,
      accountQueueLimit: fairness?.accountQueueLimit ?? options.queueLimit,
      accountPreviewQueueLimit: fairness?.accountPreviewQueueLimit ?? options.queueLimit,
    }, this.#budget);
    this.#browsers = new BrowserSupervisor(
      { ...options, assetResolver: dependencies.assetResolver, evaluator: options.evaluator, rendererMemoryMb: options.rendererMemoryMb },
      logger,
    );
  }

  async render(req: RenderRequest): Promise<RenderResult> {
    const startedAt = performance.now();
    const { maxDocumentBytes, maxImagePixels, maxPages } = this.options;
    const printed = await this.#run(req, async (html, parts, generation, printer, signal) => {
      const params = buildPrintParams({ page: req.template.page, headerHtml: parts.header, footerHtml: parts.footer, maxPages });
      const bounds = { maxDocumentBytes, maxImagePixels };
      const pdf = await generation.print(html, params, { bounds, scripted: needsScripts(html), printer, signal });
      if ((await countPages(pdf)) > maxPages) throw tooManyPages(maxPages);
      return pdf;
    });
    // Stamped after printing, outside the Chromium slot: no template HTML or CSS can reach it (preview-stamp.ts).
    const pdf = req.preview ? await stampPreview(printed) : printed;
    return { pdf, renderMs: performance.now() - startedAt };
  }

  async renderImage(req: ImageRenderRequest): Promise<ImageRenderResult> {
    const startedAt = performance.now();
    const request: RenderRequest = { template: { html: req.template.html, css: req.template.css }, data: req.data, signal: req.signal, accountId: req.accountId, kind: 'document' };
    const image = await this.#run(request, (html, _parts, generation, _printer, signal) => captureRenderedImage(generation, html, req, signal));
    return { image, contentType: IMAGE_CONTENT_TYPES[req.output.format], renderMs: performance.now() - startedAt };
  }

  renderHtml(req: RenderRequest): Promise<string> {
    return this.#run(req, async (html) => html);
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
      active: this.#queue.active,
      queued: this.#queue.waiting,
      queuedByAccount: this.#queue.waitingByAccount(),
      accountsOverFailureBudget: this.#budget?.overBudgetCount() ?? 0,
      rendersTotal: this.#renders.total,
      rendersFailed: this.#renders.failed,
      rendersSinceLaunch: current?.renders ?? 0,
      sinkholeConnections: this.#browsers.sinkholeConnections(),
    };
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#queue.refuseAll(new AppError('SERVICE_UNAVAILABLE', 'The renderer is shutting down'));
      await this.#browsers.close();
    })();
    return this.#closing;
  }

  /** Compile → slot → evaluate → assemble, then `finish` (print, or return the HTML). */
  async #run<T>(req: RenderRequest, finish: Finish<T>): Promise<T> {
    if (this.#closing) throw new AppError('SERVICE_UNAVAILABLE', 'The renderer is shutting down');
    // Cheap checks first, so a bad template never waits in the queue.
    const parts = compileParts(req.template);
    buildPrintParams({ page: req.template.page, headerHtml: undefined, footerHtml: undefined });
    const dataJson = toJson(req.data);
    const accountId = req.accountId ?? '';
    const release = await this.#queue.acquire({ accountId, kind: req.kind ?? (req.preview ? 'preview' : 'document') }, this.options.timeoutMs, req.signal);
    const renderTimeout = () => new AppError('RENDER_TIMEOUT', `The document did not render within ${this.options.timeoutMs} ms`);
    const deadline = timeoutSignal(this.options.timeoutMs, renderTimeout);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    const startedAt = performance.now();
    let generation: BrowserGeneration | undefined;
    let releaseWatch = () => {};
    this.#renders.total += 1;
    try {
      generation = await raceSignal(this.#browsers.generation(), signal);
      // A recycle may have retired it between the promise settling and now; take a slot only from a
      // live browser (checked and taken without an await in between).
      while (!generation.isLive) generation = await raceSignal(this.#browsers.generation(), signal);
      generation.renders += 1;
      releaseWatch = generation.watchRender();
      const slot = generation.takeSlot();
      try {
        const { evaluator, printer } = await slot.ready(signal);
        const remainingMs = this.options.timeoutMs - (performance.now() - startedAt);
        const templateMs = Math.max(1, Math.min(this.options.templateTimeoutMs, remainingMs));
        const limits = { timeoutMs: templateMs, limitChars: this.options.templateOutputLimitBytes, limitBytes: this.options.templateOutputLimitBytes, signal };
        const evaluated = await evaluator.evaluate(parts, dataJson, limits).catch((error: unknown) => {
          // When the render deadline, not the template limit, was the binding one, say so.
          throw isAppError(error, 'TEMPLATE_TIMEOUT') && templateMs < this.options.templateTimeoutMs ? renderTimeout() : error;
        });
        const html = injectCss(evaluated.html.main ?? '', req.template.css);
        const evaluatedAt = performance.now();
        const result = await finish(html, evaluated.html, generation, printer, signal);
        this.logger.debug(
          { evalMs: round(evaluatedAt - startedAt), sandboxMs: round(evaluated.evalMs), finishMs: round(performance.now() - evaluatedAt), htmlChars: html.length },
          'document rendered',
        );
        return result;
      } finally {
        generation.returnSlot(slot);
      }
    } catch (error) {
      this.#renders.failed += 1;
      // Failures are free of charge, so they count against the account's failure budget instead.
      if (!req.signal?.aborted) this.#budget?.recordFailure(accountId, performance.now() - startedAt);
      // Its page crashed because the memory watch killed the renderer: say so.
      if (!req.signal?.aborted && generation?.killedRendererSince(startedAt) && isCrash(error)) throw tooMuchMemory(this.options.rendererMemoryMb);
      throw this.#clientError(error, req.signal);
    } finally {
      releaseWatch();
      deadline.clear();
      release();
      if (generation) this.#browsers.afterRender(generation);
    }
  }

  #clientError(error: unknown, callerSignal: AbortSignal | undefined): unknown {
    if (callerSignal?.aborted && error === callerSignal.reason) return error;
    if (error instanceof AppError) return error;
    this.logger.warn({ err: error }, 'render failed');
    return new AppError('RENDER_FAILED', 'The document could not be rendered', { cause: error });
  }
}

/** The last step of a render: print the assembled HTML, or hand it back. */
type Finish<T> = (html: string, parts: Record<string, string>, generation: BrowserGeneration, printer: PrintPage, signal: AbortSignal) => Promise<T>;

function compileParts(template: RenderTemplate): CompiledParts {
  const parts: CompiledParts = { main: compileTemplate(template.html, 'main') };
  for (const part of ['header', 'footer'] as const) {
    const source = template.page?.[`${part}_html`];
    if (!source || source.trim() === '') continue;
    try {
      parts[part] = compileTemplate(source, part);
    } catch (error) {
      if (!isAppError(error)) throw error;
      throw new AppError(error.code, `page.${part}_html: ${error.message}`, {
        cause: error.options.cause,
        details: { ...error.details, template: `${part}_html` },
      });
    }
  }
  return parts;
}

/** A failure that a crashed page (renderer killed) produces: RENDER_FAILED, or a stopped evaluator. */
function isCrash(error: unknown): boolean {
  if (!(error instanceof AppError)) return true;
  return error.code === 'RENDER_FAILED' || error.details?.reason === 'crashed';
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
