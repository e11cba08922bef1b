/**
 * Document generation: the one use case behind both doors. `POST /v1/pdf/create` calls `generate`;
 * the job worker calls `produce` for a job accepted by `create-async`. `POST /v1/image/create` calls
 * `generate` too, with `options.image`: the same charging, idempotency and delivery, an image instead of
 * a PDF (image-generation.ts).
 *
 * A synchronous generation, in order: the idempotency key (replay, 409, 422) → the template (404/403)
 * → its required fields (a strict template: 422, required-fields.ts) → the S3 target when `store_s3`
 * (400 when not configured) → the credit, reserved (402) → render →
 * PDF/A → compact → deliver (signed link, bytes, or the customer's bucket) → the charge is posted. A
 * PDF that reaches `SPOOL_ABOVE_BYTES` (pdf/spool.ts; not PDF/A) goes into a spool file as Chromium
 * streams it, and is titled, compacted and delivered from there (docs/rendering.md "The spool"). The key,
 * the reservation and when the charge is posted or voided are charged-run.ts's, shared with the PDF
 * tools (docs/generation.md "What you are charged for").
 */
import type { FileService } from '../files/files.js';
import type { CompactOptions, PdfRenderer, RenderRequest, RenderResult } from '../rendering/pdf-renderer.js';
import { IMAGE_CONTENT_TYPES } from '../rendering/image-renderer.js';
import { canvasPage } from '../rendering/page-size.js';
import { withDocumentInfo, withDocumentInfoInFile } from '../finishing/document-info.js';
import { toPdfA, type PdfAVariant } from '../finishing/pdfa.js';
import type { Template, TemplateService } from '../templates/templates.js';
import { AppError, isAppError, ValidationError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { IdempotentRequest } from '../idempotency/idempotency.js';
import type { BlobBody } from '../storage/blob-store.js';
import type { Spool, SpooledFile } from '../pdf/spool.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import { deliverToClient, pdfFilename, type ChargedRunner, type Delivery, type ExportType, type GenerationResult } from './charged-run.js';
import { expandDottedKeys } from './data-binding.js';
import { checkRequiredFields } from './required-fields.js';
import { buildEInvoice, checkEInvoice, isHybridFormat, templateView, type BuiltEInvoice, type EInvoiceRequest } from '../einvoice/einvoice.js';
import { facturXPdfAMeta } from '../einvoice/facturx-attachment.js';
import { checkImageRequest, renderImageDocument, type ImageLoader, type ImageOptions } from './image-generation.js';

export { pdfFilename, type Delivery, type ExportType, type GenerationResult } from './charged-run.js';

export interface GenerationOptions {
  exportType: ExportType;
  /** Link lifetime for `url` (60..604800 s). */
  expirationSeconds: number;
  /** Download name without `.pdf`. */
  filename: string;
  storeS3: boolean;
  s3Filepath?: string | null;
  s3Bucket?: string | null;
  pdfVariant?: PdfAVariant | null;
  /** Tagged PDF or not, over the template's `page.tagged` (null/absent: the template's). Jobs keep it in their options. */
  tagged?: boolean | null;
  /** A template version's tag or number; omitted/null renders the draft. */
  version?: string | number | null;
  /** Render an image of an image template instead of a PDF (POST /v1/image/create). */
  image?: ImageOptions | null;
  /** Build an e-invoice too (docs/einvoice.md): Factur-X/ZUGFeRD inside a PDF/A-3b, or XRechnung XML instead of the PDF. */
  einvoice?: EInvoiceRequest | null;
}

/** A synchronous generation as the caller asks for it. */
export interface GenerationRequest {
  accountId: string;
  templateId: string;
  data: Record<string, unknown>;
  options: GenerationOptions;
  /** With an Idempotency-Key: a repeat gets the first answer, charged once. */
  idempotency?: IdempotentRequest;
}

/** Uploads to the customer's own bucket (the S3 integration). */
export interface CustomerStorage {
  /** The bucket and key a document would go to; throws INVALID_REQUEST when S3 is not configured. */
  resolveTarget(accountId: string, target: { filepath?: string | null; bucket?: string | null; filename: string }): Promise<{ bucket: string; key: string }>;
  upload(accountId: string, target: { bucket: string; key: string }, pdf: BlobBody, contentType?: string): Promise<void>;
}

/** What a preview renders: template text not saved yet, or a saved template (its draft, or a version). */
export type PreviewSource =
  | { kind: 'text'; html: string; css: string | null; page: Template['page']; strict: boolean }
  | { kind: 'saved'; templateId: string; version: string | number | null };

/** An already-paid document to render and deliver (`DocumentService.produce`). */
export interface PaidDocument {
  accountId: string;
  template: Template;
  data: Record<string, unknown>;
  options: GenerationOptions;
  /** `sync`: POST /v1/pdf/create's deadline and early refusal of long documents; `async`: a job's. */
  mode: 'sync' | 'async';
  /** Aborts the render (a job whose worker stops). */
  signal?: AbortSignal;
}

export interface DocumentService {
  /**
   * Checks what can be checked before any charge: the template, the required fields of a strict
   * template in `data` (422), and the delivery target.
   */
  prepare(accountId: string, templateId: string, options: GenerationOptions, data: Record<string, unknown>): Promise<Template>;
  /** Synchronous generation: key, prepare, reserve, produce, post; voids once on failure. */
  generate(request: GenerationRequest): Promise<GenerationResult>;
  /**
   * Renders and delivers an already-paid document: `sync` for POST /v1/pdf/create (refused early when too
   * long to print in time), `async` for the job worker (the longer async render deadline).
   */
  produce(work: PaidDocument): Promise<{ delivery: Delivery; renderMs: number; warnings?: DocumentWarning[] }>;
  /**
   * A free, stamped preview (the studio), rendered for `accountId` at preview priority: of unsaved text,
   * or of a saved template's draft or version (404s as for create; `data` omitted → its sample data).
   */
  preview(accountId: string, input: { source: PreviewSource; data?: Record<string, unknown> | null }): Promise<{ pdf: Buffer; warnings: DocumentWarning[] }>;
}

export interface DocumentDeps {
  templates: TemplateService;
  /** Key, reservation, post or void: the charging flow shared with the PDF tools. */
  charged: ChargedRunner;
  renderer: PdfRenderer;
  files: FileService;
  customerStorage?: CustomerStorage;
  /** Loads the `image_url`s of image modifications; without it every image_url is a warning. */
  loadImages?: ImageLoader;
  /**
   * Where a PDF that reaches `aboveBytes` while Chromium streams it goes, and stays until it is
   * delivered (pdf/spool.ts), so the process never holds it or its copies. Not for PDF/A (pdf-lib
   * and Ghostscript need it whole). Absent: every PDF stays in memory.
   */
  spool?: { spool: Spool; aboveBytes: number };
  logger: Logger;
}

/** Image file extension per format. */
const IMAGE_EXTENSIONS = { png: 'png', jpeg: 'jpg', webp: 'webp' } as const;

/** The delivered file: `.pdf`, or the image format's extension (a given extension is not doubled). */
export function outputFile(options: Pick<GenerationOptions, 'filename' | 'image' | 'einvoice'>): { filename: string; contentType: string } {
  if (options.einvoice && !isHybridFormat(options.einvoice.format)) {
    return { filename: `${(options.filename ?? '').replace(/\.xml$/i, '') || 'document'}.xml`, contentType: 'application/xml' };
  }
  if (!options.image) return { filename: pdfFilename(options.filename), contentType: 'application/pdf' };
  const { format } = options.image;
  const base = (options.filename ?? '').replace(new RegExp(`\\.(${IMAGE_EXTENSIONS[format]}|${format})$`, 'i'), '') || 'document';
  return { filename: `${base}.${IMAGE_EXTENSIONS[format]}`, contentType: IMAGE_CONTENT_TYPES[format] };
}

/** `s3_filepath` may not climb out of its prefix. */
export function checkS3Filepath(filepath: string | null | undefined): void {
  if (!filepath) return;
  const segments = filepath.split('/');
  if (filepath.startsWith('/') || filepath.includes('\\') || segments.some((s) => s === '..' || s === '.')) {
    throw new ValidationError([
      { loc: ['body', 's3_filepath'], msg: 'Path should be relative, without "..", "." segments, a leading "/" or backslashes', type: 'value_error' },
    ]);
  }
}

/**
 * The required-field check of a generation (required-fields.ts): nothing to check when only XML is made
 * (no template is rendered); with an e-invoice, `einvoice` is the service's to fill, not the caller's.
 */
function requiredFieldWarnings(template: Template, data: Record<string, unknown>, options: GenerationOptions): DocumentWarning[] {
  if (options.einvoice && !isHybridFormat(options.einvoice.format)) return [];
  return checkRequiredFields(template, data, options.einvoice ? ['einvoice'] : []);
}

export function createDocumentService(deps: DocumentDeps): DocumentService {
  const { templates, charged, renderer, files, customerStorage, logger } = deps;

  /** The customer-bucket uploader; INVALID_REQUEST when this deployment has none. */
  function s3Storage(): CustomerStorage {
    if (!customerStorage) throw new AppError('INVALID_REQUEST', 'S3 storage is not configured for this account; configure it with POST /v1/integrations/s3.');
    return customerStorage;
  }

  async function deliver(accountId: string, pdf: BlobBody, options: GenerationOptions): Promise<Delivery> {
    const file = outputFile(options);
    if (!options.storeS3) return deliverToClient(files, accountId, pdf, options, file);
    const storage = s3Storage();
    const target = await storage.resolveTarget(accountId, { filepath: options.s3Filepath, bucket: options.s3Bucket, filename: file.filename });
    await storage.upload(accountId, target, pdf, file.contentType);
    return { kind: 's3', bucket: target.bucket, key: target.key, filename: file.filename };
  }

  /**
   * The last step before delivery: object streams (finishing/pdf-compaction.ts) in what is left of the
   * render deadline. Not for PDF/A-1b, which is PDF 1.4 and may not have object streams; PDF/A-2b/3b
   * (PDF 1.7) may. Never fails the document: a PDF it cannot compact in time leaves as it is.
   */
  async function compactLast(pdf: Buffer, { variant, ...options }: CompactOptions & { variant: PdfAVariant | null | undefined }): Promise<Buffer> {
    if (variant === 'pdf/a-1b') return pdf;
    const result = await renderer.compact(pdf, options);
    if (!result.compacted && result.reason !== 'no smaller') logger.info({ reason: result.reason, bytes: pdf.length }, 'PDF left uncompacted');
    return result.pdf;
  }

  /**
   * Renders the document and gives it Pressroom's Info dictionary. When `spoolable` (no PDF/A to make),
   * a PDF of at least the spool's `aboveBytes` goes from Chromium into a spool file as it is streamed,
   * and is titled there: then only the file is returned, and no copy of it was ever held in memory.
   */
  async function printTitled(request: RenderRequest, title: string, spoolable: boolean): Promise<RenderResult<Buffer | SpooledFile>> {
    if (!spoolable || !deps.spool) {
      const rendered = await renderer.render(request);
      return { ...rendered, pdf: await withDocumentInfo(rendered.pdf, title) };
    }
    const { spool, aboveBytes } = deps.spool;
    const spill = { path: spool.newPath(), aboveBytes };
    const rendered = await renderer.renderSpilling(request, spill);
    if (Buffer.isBuffer(rendered.pdf)) return { ...rendered, pdf: await withDocumentInfo(rendered.pdf, title) };
    try {
      return { ...rendered, pdf: await withDocumentInfoInFile(rendered.pdf, title) };
    } catch (error) {
      await spool.remove(spill.path);
      throw error;
    }
  }

  /** A spooled PDF compacted from file to file on a compaction thread, delivered from its file, and its files removed. */
  async function deliverSpooled(accountId: string, titled: SpooledFile, options: GenerationOptions, timeoutMs: number): Promise<Delivery> {
    const spool = deps.spool!.spool;
    const outputPath = spool.newPath();
    try {
      const result = await renderer.compactFile(titled, outputPath, { timeoutMs, accountId, kind: 'document' });
      if (!result.compacted && result.reason !== 'no smaller') logger.info({ reason: result.reason, bytes: titled.size }, 'PDF left uncompacted');
      return await deliver(accountId, result.file, options);
    } finally {
      await spool.remove(titled.path, outputPath);
    }
  }

  const service: DocumentService = {
    async prepare(accountId, templateId, options, data) {
      checkS3Filepath(options.s3Filepath);
      if (options.einvoice) await checkEInvoice(options.einvoice, { accountId, pdfVariant: options.pdfVariant });
      const template = await templates.resolve(accountId, templateId, options.version);
      if (options.image) checkImageRequest(template, options.image);
      // A strict template refuses here, before the charge; produce() gives a lenient one's warnings.
      requiredFieldWarnings(template, data, options);
      if (options.storeS3) {
        await s3Storage().resolveTarget(accountId, { filepath: options.s3Filepath, bucket: options.s3Bucket, filename: outputFile(options).filename });
      }
      return template;
    },

    async produce({ accountId, template, data, options, signal, mode }) {
      const started = performance.now();
      // Checked again: a job renders the template as it is when it runs, which may have changed since
      // it was accepted (a strict one then fails the job, refunded).
      const fieldWarnings = requiredFieldWarnings(template, data, options);
      if (options.image) {
        const loadImages: ImageLoader = deps.loadImages ?? (async (urls) => new Map(urls.map((url) => [url, { error: 'image downloads are not set up in this process' }])));
        const image = await renderImageDocument({ renderer, loadImages }, { accountId, template, data, image: options.image, signal });
        const renderMs = Math.round(performance.now() - started);
        return { delivery: await deliver(accountId, image.bytes, options), renderMs, warnings: [...fieldWarnings, ...image.warnings] };
      }
      // Checked in prepare (before the charge); built again here from the same request.
      const einvoice: BuiltEInvoice | undefined = options.einvoice ? await buildEInvoice(options.einvoice, { accountId, pdfVariant: options.pdfVariant }) : undefined;
      if (einvoice && !isHybridFormat(einvoice.format)) {
        return { delivery: await deliver(accountId, Buffer.from(einvoice.xml, 'utf8'), options), renderMs: Math.round(performance.now() - started) };
      }
      const bound = expandDottedKeys(data) as Record<string, unknown>;
      const variant: PdfAVariant | null | undefined = einvoice ? 'pdf/a-3b' : options.pdfVariant;
      const printed = await printTitled(
        {
          template: { html: template.html, css: template.css, page: template.page, strict: template.strict },
          // The invoice reaches the template as one more top-level variable, `einvoice`, beside the data.
          data: (einvoice && options.einvoice ? { ...bound, einvoice: templateView(options.einvoice, einvoice) } : bound) as ReturnType<typeof expandDottedKeys>,
          signal,
          accountId,
          kind: 'document',
          tagged: options.tagged ?? undefined,
          mode,
        },
        template.name,
        !variant,
      );
      const warnings = [...fieldWarnings, ...printed.warnings];
      // What is left of the render deadline once the document is printed and titled: compaction's budget.
      const compactionMs = printed.deadlineLeftMs - (performance.now() - started - printed.renderMs);
      if (!Buffer.isBuffer(printed.pdf)) {
        const delivery = await deliverSpooled(accountId, printed.pdf, options, compactionMs);
        return { delivery, renderMs: Math.round(performance.now() - started), warnings };
      }
      const archival = variant ? await toPdfA(printed.pdf, variant, { ...(einvoice ? facturXPdfAMeta(einvoice) : {}), accountId }) : printed.pdf;
      const pdf = await compactLast(archival, { variant, timeoutMs: compactionMs, accountId, kind: 'document' });
      const renderMs = Math.round(performance.now() - started);
      return { delivery: await deliver(accountId, pdf, options), renderMs, warnings };
    },

    async generate(request) {
      const startedAt = performance.now();
      const log = (outcome: string, charged: 0 | 1, extra: Record<string, unknown> = {}) =>
        logger.info({ accountId: request.accountId, templateId: request.templateId, outcome, charged, durationMs: Math.round(performance.now() - startedAt), ...extra }, 'generation');
      try {
        return await charged.run({
          accountId: request.accountId,
          templateId: request.templateId,
          idempotency: request.idempotency,
          log,
          prepare: () => service.prepare(request.accountId, request.templateId, request.options, request.data),
          produce: async (template) => {
            const { delivery, renderMs, warnings } = await service.produce({ accountId: request.accountId, template, data: request.data, options: request.options, mode: 'sync' });
            return { delivery, execMs: renderMs, warnings };
          },
        });
      } catch (error) {
        log(isAppError(error) ? error.code : error instanceof ValidationError ? 'invalid' : 'error', 0);
        throw error;
      }
    },

    async preview(accountId, { source, data }) {
      const template =
        source.kind === 'text'
          ? { html: source.html, css: source.css, page: source.page, sampleData: null, fields: [], strict: source.strict }
          : await templates.resolve(accountId, source.templateId, source.version);
      const values = data ?? template.sampleData ?? {};
      const fieldWarnings = checkRequiredFields(template, values);
      // A saved image template has no paper: its preview is a page of its canvas, the image's shape.
      const page = 'kind' in template && template.kind === 'image' && template.canvas ? canvasPage(template.canvas) : template.page;
      const rendered = await renderer.render({
        template: { html: template.html, css: template.css, page, strict: template.strict },
        data: expandDottedKeys(values),
        preview: true,
        accountId,
        kind: 'preview',
      });
      const titled = await withDocumentInfo(rendered.pdf, 'Preview');
      return { pdf: await compactLast(titled, { variant: null, timeoutMs: rendered.deadlineLeftMs, accountId, kind: 'preview' }), warnings: [...fieldWarnings, ...rendered.warnings] };
    },
  };
  return service;
}
