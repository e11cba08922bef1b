/**
 * The steps of one render, in the order pdf-renderer.ts runs them: compile (in Node, before any queue),
 * then on a leased slot evaluate, assemble, and print or capture. Admission (the fair slot) and the
 * lease itself (browser/browser-supervisor.ts `withSlot`) are the renderer's; each step here is a plain
 * function of what the one before it produced.
 */
import type { SlotLease } from '../browser/browser-supervisor.js';
import { tooManyPages } from '../browser/pages/document-bounds.js';
import type { DocumentResources } from '../browser/pages/closed-room.js';
import type { PrintParams } from '../browser/pages/print-page.js';
import type { StreamSpill } from '../browser/pages/spill-file.js';
import type { CompiledParts } from '../browser/sandbox/evaluator-page.js';
import type { AssetPin } from '../assets/asset-revisions.js';
import { countPages } from '../pdf/pdf-page-count.js';
import type { PrintedPdf } from '../pdf/pdf-file.js';
import type { Config } from '../shared/config.js';
import { AppError, isAppError } from '../shared/errors.js';
import { randomId } from '../shared/ids.js';
import { compileTemplate } from '../template-language/compiler.js';
import type { TemplatePart } from '../template-language/syntax.js';
import { appendToBody, injectCss, needsScripts } from './html-assembly.js';
import { MAX_PAGE_LENGTH_INCHES } from './page-size.js';
import { LONG_TABLES } from './render-limits.js';
import { buildPrintParams, type PageSetup } from './pdf-options.js';
import type { PrintRates } from './print-rates.js';
import type { RenderProgress } from './render-progress.js';
import {
  createDocumentResources,
  type RemoteDocumentBounds,
  type AssetSource,
  uniqueAssetUrls,
} from './resources/document-resources.js';
import { inlineHeaderFooter } from './resources/inline-header-footer.js';
import type { RemoteResourceFetcher } from './resources/remote-fetcher.js';
import type { RenderWarnings } from './resources/render-warnings.js';
import { refuseTooLongForSync } from './sync-estimate.js';

/** The template parts a render compiles: the document, its CSS, its header and footer. */
export interface TemplateSources {
  html: string;
  css?: string | null;
  page?: PageSetup | null;
}

/** Compile: each part to JavaScript source in Node (cached; code is generated, never run here). */
export function compileParts(template: TemplateSources): CompiledParts {
  const parts: CompiledParts = { main: compilePart(template.html, 'html') };
  if (template.css && template.css.trim() !== '') parts.css = compilePart(template.css, 'css');
  for (const part of ['header', 'footer'] as const) {
    const source = template.page?.[`${part}_html`];
    if (source && source.trim() !== '') parts[part] = compilePart(source, part);
  }
  // The page setup is checked here too, so that a bad one never waits in the queue.
  buildPrintParams({ page: template.page, headerHtml: undefined, footerHtml: undefined });
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

/** What one render carries from admission into the steps on its slot. */
export interface RenderRun {
  parts: CompiledParts;
  dataJson: string;
  accountId: string;
  warnings: RenderWarnings;
  /** The render's deadline and its caller's signal together. */
  signal: AbortSignal;
  /** When the render got its slot (performance.now()): the deadline counts from it. */
  startedAt: number;
  timeoutMs: number;
  renderTimeout: () => AppError;
  progress: RenderProgress;
  strict: boolean;
  /** The asset revisions the template prints (a published version's), or the newest. */
  pin: AssetPin | null | undefined;
}

/** Evaluate: the compiled parts with the data, in the slot's sandboxed evaluator page. */
export async function evaluateParts(
  lease: SlotLease,
  run: RenderRun,
  limits: Pick<Config['rendering'], 'templateTimeoutMs' | 'templateOutputLimitBytes'>,
): Promise<Record<string, string>> {
  const { signal, startedAt, timeoutMs, progress } = run;
  progress.enter('pages');
  const evaluator = await lease.evaluator(signal);
  progress.enter('template');
  const remainingMs = timeoutMs - (performance.now() - startedAt);
  const templateMs = Math.max(1, Math.min(limits.templateTimeoutMs, remainingMs));
  const evaluated = await evaluator
    .evaluate(run.parts, run.dataJson, {
      timeoutMs: templateMs,
      limitChars: limits.templateOutputLimitBytes,
      limitBytes: limits.templateOutputLimitBytes,
      signal,
      strict: run.strict,
    })
    .catch((error: unknown) => {
      // When the render deadline, not the template limit, was the binding one, say so.
      throw isAppError(error, 'TEMPLATE_TIMEOUT') && templateMs < limits.templateTimeoutMs
        ? run.renderTimeout()
        : error;
    });
  for (const warning of evaluated.warnings) run.warnings.add(warning);
  return evaluated.html;
}

/** Where an assembled document's assets and remote resources come from. */
export interface ResourceSources {
  assets?: AssetSource;
  remoteResources?: RemoteResourceFetcher;
  bounds: RemoteDocumentBounds;
}

/** The document ready for its last step. */
export interface Assembled {
  /** The document with its CSS in place. */
  html: string;
  /** Each evaluated part (`main`, `css`, `header`, `footer`). */
  parts: Record<string, string>;
  resources: DocumentResources;
}

/** Assemble: the evaluated CSS into the document, asset URLs made unique, the document's resources. */
export function assembleDocument(parts: Record<string, string>, run: RenderRun, sources: ResourceSources): Assembled {
  // The css is a template too (issue 13), evaluated with the same data.
  const html = uniqueAssetUrls(injectCss(parts.main ?? '', parts.css), randomId(12));
  run.progress.enter('print', html.length);
  const resources = createDocumentResources({
    accountId: run.accountId,
    pin: run.pin,
    warnings: run.warnings,
    assets: sources.assets,
    remote: sources.remoteResources,
    bounds: sources.bounds,
  });
  return { html, parts, resources };
}

/** How a document is printed: its page setup, tagging, the sync estimate, and where a long PDF spills. */
export interface PrintRequest {
  page: PageSetup | null | undefined;
  tagged: boolean | undefined;
  /** PDF/UA: the page is surveyed for what it needs before printing. */
  accessible: boolean;
  /** `sync` gets the early refusal of a document too long to print before the deadline. */
  sync: boolean;
  spill: StreamSpill | undefined;
}

/** Print: header and footer inlined, the PDF printed within the document bounds, its pages counted. */
export async function printDocument(
  lease: SlotLease,
  document: Assembled & { run: RenderRun },
  setup: { request: PrintRequest; options: Config['rendering']; rates: PrintRates },
): Promise<PrintedPdf> {
  const { html, parts, resources, run } = document;
  const { request, options, rates } = setup;
  // Chromium's header and footer load nothing: their images and fonts go in as data: URIs.
  const header = await inlineHeaderFooter(parts.header, { part: 'header', documentHtml: html, resources });
  const footer = await inlineHeaderFooter(parts.footer, { part: 'footer', documentHtml: html, resources });
  const params: PrintParams = buildPrintParams({
    page: request.page,
    headerHtml: header.html,
    footerHtml: footer.html,
    maxPages: options.maxPages,
    tagged: request.tagged,
  });
  const tagged = params.generateTaggedPDF === true;
  // Laid out: from here on it is printing, the part whose cost per page the estimate uses.
  let printStartedAt: number | undefined;
  const checkLength = (heightPx: number) => {
    if (request.sync) {
      const perPage = rates.perPage(tagged);
      refuseTooLongForSync({ heightPx, params, slotStartedAt: run.startedAt, perPage, options });
    }
    printStartedAt = performance.now();
  };
  const pdf = await lease.print(appendToBody(html, header.preload + footer.preload), params, {
    bounds: {
      maxDocumentBytes: options.maxDocumentBytes,
      maxImagePixels: options.maxImagePixels,
      maxPageInches: MAX_PAGE_LENGTH_INCHES,
      checkLength,
      spill: request.spill,
      accessible: request.accessible,
      longTables: {
        ...LONG_TABLES,
        leftAlone: (reason) =>
          run.warnings.add({
            code: 'LONG_TABLE_NOT_CUT',
            message: `A long table was printed in one piece, which costs far more memory and time than its rows: ${reason}.`,
          }),
      },
    },
    scripted: needsScripts(html),
    signal: run.signal,
    resources,
  });
  const printedAt = performance.now();
  const pages = await countPages(pdf);
  if (pages > options.maxPages) throw tooManyPages(options.maxPages);
  if (printStartedAt !== undefined) rates.observe(tagged, printedAt - printStartedAt, pages);
  return pdf;
}
