/**
 * Document generation: the one use case behind both doors. `POST /v1/pdf/create` calls `generate`;
 * the job worker calls `produce` for a job accepted by `create-async`. `POST /v1/image/create` calls
 * `generate` too, with `options.image`: the same charging, idempotency and delivery, an image instead of
 * a PDF (image-generation.ts).
 *
 * A synchronous generation, in order: the idempotency key (replay, 409, 422) → the template (404/403)
 * → its required fields (a strict template: 422, required-fields.ts) → the S3 target when `store_s3`
 * (400 when not configured) → the credit, reserved (402) → render → the one step after printing
 * (finishing/finishing.ts: document info, PDF/A, compaction; the stamp for previews) → deliver (signed
 * link, bytes, or the customer's bucket) → the charge is posted. A PDF that reaches `SPOOL_ABOVE_BYTES`
 * (pdf/spool.ts; not PDF/A) goes into a spool file as Chromium streams it, and is finished and
 * delivered from there (docs/long-documents.md "The spool"). The key,
 * the reservation and when the charge is posted or voided are credits/paid-request.ts's, shared with the PDF
 * tools (docs/generation.md "What you are charged for").
 */
import type { FileService } from '../files/files.js';
import type { PdfRenderer, RenderRequest } from '../rendering/pdf-renderer.js';
import { IMAGE_CONTENT_TYPES, MAX_IMAGE_PIXELS } from '../rendering/image-renderer.js';
import { canvasPage } from '../rendering/page-size.js';
import type { FinishedPdf, Finishing } from '../finishing/finishing.js';
import type { PdfAVariant } from '../finishing/pdfa.js';
import type { Template, TemplateService } from '../templates/templates.js';
import { AppError, isAppError, ValidationError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { IdempotentRequest } from '../idempotency/idempotency.js';
import type { BlobBody } from '../storage/blob-store.js';
import type { Spool } from '../pdf/spool.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import type { ChargedRunner, GenerationResult } from '../credits/paid-request.js';
import { type Deliverer, type Delivery, type ExportType, pdfFilename } from '../files/delivery.js';
import { expandDottedKeys } from './data-binding.js';
import { checkRequiredFields } from './required-fields.js';
import {
  buildEInvoice,
  checkEInvoice,
  isHybridFormat,
  templateView,
  type BuiltEInvoice,
  type EInvoiceRequest,
  type EInvoiceVerdict,
} from '../einvoice/einvoice.js';
import type { EInvoiceRules } from '../einvoice/rules/official-checks.js';
import { facturXPdfAMeta } from '../einvoice/facturx-attachment.js';
import type { SignatureOptions, Signing } from '../signing/sign.js';
import {
  checkImageRequest,
  isPageImage,
  pageImageWarnings,
  pageImageWidth,
  renderImageDocument,
  type ImageLoader,
  type ImageOptions,
} from './image-generation.js';
import { pageImage } from '../pdf/page-image.js';
import { CHECK_NAME as ACCESSIBILITY_CHECK } from '../accessibility/pdf-ua.js';
import { pdfBuffer } from '../pdf/pdf-file.js';
import type { TextLayout } from '../finishing/requested/text-layout.js';
import {
  checkPdfUaCombination,
  checkSignature,
  finishingFor,
  sealFinishing,
  wantsPdfUa,
  type FinishingFields,
} from './finishing-options.js';
import type { AssetReader } from '../finishing/requested/watermark.js';
import type { FormFiles } from '../pdf-forms/form-files.js';
import { checkFormDocument, fillFormDocument, type FormOptions } from './form-documents.js';

export type { GenerationResult } from '../credits/paid-request.js';
export { pdfFilename, type CustomerStorage, type Delivery, type ExportType } from '../files/delivery.js';

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
  /** PDF/UA-1, over the template's `page.pdf_ua` (null/absent: the template's; docs/accessibility.md). */
  pdfUa?: boolean | null;
  /** A template version's tag or number; omitted/null renders the draft. */
  version?: string | number | null;
  /** Request fields accepted and ignored as TemplateFox ignores them (e.g. s3_filepath without store_s3): a FIELD_IGNORED warning each. */
  ignoredFields?: readonly string[];
  /** Render an image of an image template instead of a PDF (POST /v1/image/create). */
  image?: ImageOptions | null;
  /** Build an e-invoice too (docs/einvoice.md): Factur-X/ZUGFeRD inside a PDF/A-3b, or XRechnung XML instead of the PDF. */
  einvoice?: EInvoiceRequest | null;
  /** Sign the PDF with one of the account's certificates, as its last change (docs/finishing.md). */
  sign?: SignatureOptions | null;
  /** Finishing after PDF/A (docs/finishing.md): a watermark, Info entries, AES-256 protection. */
  watermark?: FinishingFields['watermark'];
  metadata?: FinishingFields['metadata'];
  protect?: FinishingFields['protect'];
  /** A pdf_form template's document (docs/pdf-forms.md): flattened (the default), or kept fillable, or locked. */
  form?: FormOptions | null;
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
  /** What the e-invoice checks concluded when the request was accepted (prepare): its warnings go with the answer. */
  einvoice?: EInvoiceVerdict | null;
  /** Aborts the render (a job whose worker stops). */
  signal?: AbortSignal;
}

/** What prepare found: the template to render, and (with an e-invoice) the checks' verdict. */
export interface PreparedDocument {
  template: Template;
  einvoice: EInvoiceVerdict | null;
}

/** What produce made: the delivery, how long it took, its warnings, and which checks judged its e-invoice. */
export interface ProducedDocument {
  delivery: Delivery;
  renderMs: number;
  warnings?: DocumentWarning[];
  /** `einvoice_checks` (einvoice.ts EInvoiceVerdict): present with an e-invoice. */
  einvoiceChecks?: string;
  /** `accessibility_checks`: the PDF/UA check the file passed, present under pdf_ua. */
  accessibilityChecks?: string;
}

export interface DocumentService {
  /**
   * Checks what can be checked before any charge: the e-invoice, the template, the required fields of
   * a strict template in `data` (422), and the delivery target.
   */
  prepare(
    accountId: string,
    templateId: string,
    options: GenerationOptions,
    data: Record<string, unknown>,
  ): Promise<PreparedDocument>;
  /** Synchronous generation: key, prepare, reserve, produce, post; voids once on failure. */
  generate(request: GenerationRequest): Promise<GenerationResult>;
  /**
   * Renders and delivers an already-paid document: `sync` for POST /v1/pdf/create (refused early when too
   * long to print in time), `async` for the job worker (the longer async render deadline).
   */
  produce(work: PaidDocument): Promise<ProducedDocument>;
  /**
   * A free, stamped preview (the studio), rendered for `accountId` at preview priority: of unsaved text,
   * or of a saved template's draft or version (404s as for create; `data` omitted → its sample data).
   */
  preview(
    accountId: string,
    input: { source: PreviewSource; data?: Record<string, unknown> | null },
  ): Promise<{ pdf: Buffer; warnings: DocumentWarning[] }>;
  /** The options as a job row may keep them: `protect` passwords sealed (finishing-options.ts). */
  storable?(options: GenerationOptions): GenerationOptions;
}

export interface DocumentDeps {
  templates: TemplateService;
  /** Key, reservation, post or void: the charging flow shared with the PDF tools. */
  charged: ChargedRunner;
  renderer: PdfRenderer;
  /** The one step after printing (finishing/finishing.ts): stamp, document info, PDF/A, compaction. */
  finishing: Finishing;
  /** Hands results over: a signed link, the bytes, or the customer's bucket (files/delivery.ts). */
  delivery: Deliverer;
  /** Loads the `image_url`s of image modifications; without it every image_url is a warning. */
  loadImages?: ImageLoader;
  /** Checks and makes `sign` (signing/); without it a `sign` is refused. */
  signing?: Signing;
  /**
   * Where a PDF that reaches `aboveBytes` while Chromium streams it goes, and stays until it is
   * delivered (pdf/spool.ts), so the process never holds it or its copies. Not for PDF/A (pdf-lib
   * and Ghostscript need it whole). Absent: every PDF stays in memory.
   */
  spool?: { spool: Spool; aboveBytes: number };
  logger: Logger;
  /** A watermark's image asset; without it an asset watermark is a 422 (none found). */
  readAsset?: AssetReader;
  /** Lays out watermark text in scripts that need shaping; without it such text is a 422. */
  layOutText?: TextLayout;
  /** Seals `protect` passwords while a job waits (finishing-options.ts); derived from the secret key. */
  sealKey?: Buffer;
  /** The official e-invoice rules (einvoice/rules/); without them e-invoices get the built-in checks only. */
  einvoiceRules?: EInvoiceRules;
  /** Form templates' stored PDFs (pdf-forms/form-files.ts); without them a pdf_form template's document fails. */
  formFiles?: Pick<FormFiles, 'read' | 'flatten'>;
}

/** A filled form's finishing budget (compaction's share): far past a form's, which has no render before it. */
const FORM_FINISH_TIMEOUT_MS = 60_000;

/** Image file extension per format. */
const IMAGE_EXTENSIONS = { png: 'png', jpeg: 'jpg', webp: 'webp' } as const;

/** The delivered file: `.pdf`, or the image format's extension (a given extension is not doubled). */
export function outputFile(options: Pick<GenerationOptions, 'filename' | 'image' | 'einvoice'>): {
  filename: string;
  contentType: string;
} {
  if (options.einvoice && !isHybridFormat(options.einvoice.format)) {
    return {
      filename: `${(options.filename ?? '').replace(/\.xml$/i, '') || 'document'}.xml`,
      contentType: 'application/xml',
    };
  }
  if (!options.image) return { filename: pdfFilename(options.filename), contentType: 'application/pdf' };
  const { format } = options.image;
  const base =
    (options.filename ?? '').replace(new RegExp(`\\.(${IMAGE_EXTENSIONS[format]}|${format})$`, 'i'), '') || 'document';
  return { filename: `${base}.${IMAGE_EXTENSIONS[format]}`, contentType: IMAGE_CONTENT_TYPES[format] };
}

/** `s3_filepath` may not climb out of its prefix. */
export function checkS3Filepath(filepath: string | null | undefined): void {
  if (!filepath) return;
  const segments = filepath.split('/');
  if (filepath.startsWith('/') || filepath.includes('\\') || segments.some((s) => s === '..' || s === '.')) {
    throw new ValidationError([
      {
        loc: ['body', 's3_filepath'],
        msg: 'Path should be relative, without "..", "." segments, a leading "/" or backslashes',
        type: 'value_error',
      },
    ]);
  }
}

/**
 * The required-field check of a generation (required-fields.ts): nothing to check when only XML is made
 * (no template is rendered); with an e-invoice, `einvoice` is the service's to fill, not the caller's.
 */
function requiredFieldWarnings(
  template: Template,
  data: Record<string, unknown>,
  options: GenerationOptions,
): DocumentWarning[] {
  if (options.einvoice && !isHybridFormat(options.einvoice.format)) return [];
  return checkRequiredFields(template, data, options.einvoice ? ['einvoice'] : []);
}

export function createDocumentService(deps: DocumentDeps): DocumentService {
  const { templates, charged, renderer, finishing, delivery, logger } = deps;
  const noAssets: AssetReader = async () => undefined;
  const finishingContext = (accountId: string) => ({
    accountId,
    readAsset: deps.readAsset ?? noAssets,
    layOutText: deps.layOutText,
    sealKey: deps.sealKey,
  });

  const s3Storage = delivery.customerBucket;

  function deliver(accountId: string, body: BlobBody, options: GenerationOptions): Promise<Delivery> {
    return delivery.deliver(accountId, body, { ...options, file: outputFile(options) });
  }

  /**
   * Prints the document: when `spoolable` (no PDF/A to make), a PDF of at least the spool's
   * `aboveBytes` goes from Chromium into a spool file as it is streamed, and stays a file until it is
   * delivered, so no copy of it is ever held in memory.
   */
  function print(request: RenderRequest, spoolable: boolean) {
    if (!spoolable || !deps.spool) return renderer.render(request);
    const { spool, aboveBytes } = deps.spool;
    return renderer.renderSpilling(request, { path: spool.newPath(), aboveBytes });
  }

  /** Delivers a finished PDF; a spooled one from its file, whose files are removed afterwards. */
  async function deliverFinished(
    accountId: string,
    finished: FinishedPdf,
    options: GenerationOptions,
  ): Promise<Delivery> {
    if ('pdf' in finished) return deliver(accountId, finished.pdf, options);
    try {
      return await deliver(accountId, finished.file, options);
    } finally {
      await deps.spool!.spool.remove(...finished.temporaryPaths);
    }
  }

  /**
   * A form template's preview: the form filled as create fills it (flattened), on the form pool's free
   * tickets, stamped PREVIEW like an HTML preview, never charged. A required field without a value is
   * a MISSING_REQUIRED_FIELD warning and a blank, not a 422 (the data is being filled in).
   */
  async function previewForm(accountId: string, template: Template, values: Record<string, unknown>) {
    const fieldWarnings = checkRequiredFields({ fields: template.fields, strict: false }, values);
    const filled = await fillFormDocument({ accountId, template, data: values, options: {} }, deps.formFiles, {
      preview: true,
    });
    const finished = await finishing.finish(filled.pdf, {
      accountId,
      kind: 'preview',
      title: 'Preview',
      previewStamp: true,
      timeoutMs: FORM_FINISH_TIMEOUT_MS,
    });
    if (!('pdf' in finished)) throw new Error('a preview is never spooled');
    return { pdf: finished.pdf, warnings: [...fieldWarnings, ...filled.warnings] };
  }

  const service: DocumentService = {
    async prepare(accountId, templateId, options, data) {
      checkS3Filepath(options.s3Filepath);
      const einvoice = options.einvoice
        ? (
            await checkEInvoice(options.einvoice, {
              accountId,
              pdfVariant: options.pdfVariant,
              rules: deps.einvoiceRules,
            })
          ).verdict
        : null;
      if (options.sign) await checkSignature(options, { accountId, signing: deps.signing });
      const template = await templates.resolve(accountId, templateId, options.version);
      // A form template's data is checked against its form here, before the charge (form-documents.ts).
      await checkFormDocument(template, options, data);
      if (options.image) checkImageRequest(template, options.image);
      if (!options.image && wantsPdfUa(options, template)) checkPdfUaCombination(options);
      // A strict template refuses here, before the charge; produce() gives a lenient one's warnings.
      requiredFieldWarnings(template, data, options);
      await finishingFor(options, finishingContext(accountId));
      if (options.storeS3) {
        await s3Storage().resolveTarget(accountId, {
          filepath: options.s3Filepath,
          bucket: options.s3Bucket,
          filename: outputFile(options).filename,
        });
      }
      return { template, einvoice };
    },

    async produce({ accountId, template, data, options, signal, mode, einvoice: verdict }) {
      const started = performance.now();
      if (template.kind === 'pdf_form') {
        const filled = await fillFormDocument({ accountId, template, data, options }, deps.formFiles);
        const finished = await finishing.finish(filled.pdf, {
          accountId,
          kind: 'document',
          title: template.name,
          timeoutMs: FORM_FINISH_TIMEOUT_MS,
          sign: options.sign,
          ...(await finishingFor(options, finishingContext(accountId))),
        });
        const renderMs = Math.round(performance.now() - started);
        const delivery = await deliverFinished(accountId, finished, options);
        return { delivery, renderMs, warnings: [...ignoredFieldWarnings(options), ...filled.warnings] };
      }
      // Checked again: a job renders the template as it is when it runs, which may have changed since
      // it was accepted (a strict one then fails the job, refunded).
      const fieldWarnings = [
        ...ignoredFieldWarnings(options),
        ...requiredFieldWarnings(template, data, options),
        ...(verdict?.warnings ?? []),
      ];
      const checked = options.einvoice ? { einvoiceChecks: verdict?.checks ?? 'built-in' } : {};
      if (options.image && isPageImage(template)) {
        const printed = await print(
          {
            template: {
              html: template.html,
              css: template.css,
              page: template.page,
              strict: template.strict,
              assets: template.version?.assets,
            },
            data: expandDottedKeys(data) as ReturnType<typeof expandDottedKeys>,
            signal,
            accountId,
            kind: 'document',
            mode,
          },
          false,
        );
        const format = options.image.format === 'jpeg' ? 'jpeg' : 'png';
        const bytes = await pageImage(await pdfBuffer(printed.pdf), {
          page: options.image.page ?? 1,
          width: pageImageWidth(template, options.image),
          format,
          quality: options.image.quality,
          accountId,
          maxPixels: MAX_IMAGE_PIXELS,
        });
        const renderMs = Math.round(performance.now() - started);
        return {
          delivery: await deliver(accountId, bytes, options),
          renderMs,
          warnings: [...fieldWarnings, ...pageImageWarnings(template, options.image), ...printed.warnings],
        };
      }
      if (options.image) {
        const loadImages: ImageLoader =
          deps.loadImages ??
          (async (urls) =>
            new Map(urls.map((url) => [url, { error: 'image downloads are not set up in this process' }])));
        const image = await renderImageDocument(
          { renderer, loadImages },
          { accountId, template, data, image: options.image, signal },
        );
        const renderMs = Math.round(performance.now() - started);
        return {
          delivery: await deliver(accountId, image.bytes, options),
          renderMs,
          warnings: [...fieldWarnings, ...image.warnings],
        };
      }
      // Checked in prepare (before the charge); built again here from the same request.
      const einvoice: BuiltEInvoice | undefined = options.einvoice
        ? await buildEInvoice(options.einvoice, { accountId, pdfVariant: options.pdfVariant })
        : undefined;
      if (einvoice && !isHybridFormat(einvoice.format)) {
        return {
          delivery: await deliver(accountId, Buffer.from(einvoice.xml, 'utf8'), options),
          renderMs: Math.round(performance.now() - started),
          warnings: fieldWarnings,
          ...checked,
        };
      }
      const bound = expandDottedKeys(data) as Record<string, unknown>;
      const pdfUa = wantsPdfUa(options, template);
      if (pdfUa) checkPdfUaCombination(options);
      const variant: PdfAVariant | null | undefined = einvoice ? 'pdf/a-3b' : options.pdfVariant;
      // Checked in prepare; made again here (a job's asset is read when it runs).
      const finish = await finishingFor(options, finishingContext(accountId));
      const printed = await print(
        {
          template: {
            html: template.html,
            css: template.css,
            page: template.page,
            strict: template.strict,
            assets: template.version?.assets,
          },
          // The invoice reaches the template as one more top-level variable, `einvoice`, beside the data.
          data: (einvoice && options.einvoice
            ? { ...bound, einvoice: templateView(options.einvoice, einvoice) }
            : bound) as ReturnType<typeof expandDottedKeys>,
          signal,
          accountId,
          kind: 'document',
          tagged: options.tagged ?? undefined,
          accessible: pdfUa,
          mode,
        },
        // A document to sign, mark, protect or make PDF/UA stays in memory: those steps work on bytes, not files.
        !variant && !options.sign && !finish.watermark && !finish.protect && !pdfUa,
      );
      const warnings = [...fieldWarnings, ...printed.warnings];
      const finished = await finishing.finish(printed.pdf, {
        accountId,
        kind: 'document',
        title: template.name,
        pdfa: variant ? { variant, extras: einvoice ? facturXPdfAMeta(einvoice) : undefined } : null,
        // What is left of the render deadline once the document is printed: compaction's budget.
        timeoutMs: printed.deadlineLeftMs - (performance.now() - started - printed.renderMs),
        sign: options.sign,
        pdfUa,
        ...finish,
      });
      const renderMs = Math.round(performance.now() - started);
      const delivery = await deliverFinished(accountId, finished, options);
      return {
        delivery,
        renderMs,
        warnings,
        ...checked,
        ...(pdfUa ? { accessibilityChecks: ACCESSIBILITY_CHECK } : {}),
      };
    },

    async generate(request) {
      const startedAt = performance.now();
      const log = (outcome: string, charged: 0 | 1, extra: Record<string, unknown> = {}) =>
        logger.info(
          {
            accountId: request.accountId,
            templateId: request.templateId,
            outcome,
            charged,
            durationMs: Math.round(performance.now() - startedAt),
            ...extra,
          },
          'generation',
        );
      try {
        return await charged.run({
          accountId: request.accountId,
          templateId: request.templateId,
          idempotency: request.idempotency,
          log,
          prepare: () => service.prepare(request.accountId, request.templateId, request.options, request.data),
          produce: async ({ template, einvoice }) => {
            const { delivery, renderMs, warnings, einvoiceChecks, accessibilityChecks } = await service.produce({
              accountId: request.accountId,
              template,
              data: request.data,
              options: request.options,
              mode: 'sync',
              einvoice,
            });
            return { delivery, execMs: renderMs, warnings, einvoiceChecks, accessibilityChecks };
          },
        });
      } catch (error) {
        log(isAppError(error) ? error.code : error instanceof ValidationError ? 'invalid' : 'error', 0);
        throw error;
      }
    },

    async preview(accountId, { source, data }) {
      const saved =
        source.kind === 'saved' ? await templates.resolve(accountId, source.templateId, source.version) : null;
      if (saved?.kind === 'pdf_form') return previewForm(accountId, saved, data ?? saved.sampleData ?? {});
      const template =
        source.kind === 'text'
          ? {
              html: source.html,
              css: source.css,
              page: source.page,
              sampleData: null,
              fields: [],
              strict: source.strict,
            }
          : saved!;
      const values = data ?? template.sampleData ?? {};
      const fieldWarnings = checkRequiredFields(template, values);
      // A saved image template has no paper: its preview is a page of its canvas, the image's shape.
      const page =
        'kind' in template && template.kind === 'image' && template.canvas
          ? canvasPage(template.canvas)
          : template.page;
      const rendered = await renderer.render({
        template: {
          html: template.html,
          css: template.css,
          page,
          strict: template.strict,
          assets: 'version' in template ? template.version?.assets : undefined,
        },
        data: expandDottedKeys(values),
        accountId,
        kind: 'preview',
      });
      // Stamped after printing, outside the Chromium slot: no template HTML or CSS can reach the stamp.
      const finished = await finishing.finish(rendered.pdf, {
        accountId,
        kind: 'preview',
        title: 'Preview',
        previewStamp: true,
        timeoutMs: rendered.deadlineLeftMs,
      });
      if (!('pdf' in finished)) throw new Error('a preview is never spooled');
      return { pdf: finished.pdf, warnings: [...fieldWarnings, ...rendered.warnings] };
    },

    storable: (options) => sealFinishing(options, deps.sealKey),
  };
  return service;
}

/** A FIELD_IGNORED warning for each request field accepted and ignored (docs/templatefox.md "Fields accepted and ignored"). */
function ignoredFieldWarnings(options: GenerationOptions): DocumentWarning[] {
  return (options.ignoredFields ?? []).map((field) => ({
    code: 'FIELD_IGNORED',
    message:
      field === 'webhook_secret'
        ? 'webhook_secret was ignored: it signs webhooks, and no webhook_url was given.'
        : `${field} was ignored: it applies only with store_s3: true.`,
  }));
}
