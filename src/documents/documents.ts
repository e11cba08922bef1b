/**
 * Document generation: the one use case behind both doors. `POST /v1/pdf/create` calls `generate`;
 * the job worker calls `produce` for a job accepted by `create-async`.
 *
 * A synchronous generation, in order: the template (404/403) → the S3 target when `store_s3` (400 when
 * not configured) → the credit (402) → render → PDF/A → deliver (signed link, bytes, or the customer's
 * bucket). Any failure after the debit gives exactly one REFUND, then the error.
 */
import type { CreditLedger } from '../credits/ledger.js';
import type { FileService } from '../files/files.js';
import type { PdfRenderer } from '../rendering/pdf-renderer.js';
import { toPdfA, type PdfAVariant } from '../rendering/pdfa.js';
import type { Template, TemplateService } from '../templates/templates.js';
import { AppError, isAppError, ValidationError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { expandDottedKeys } from './data-binding.js';

export type ExportType = 'url' | 'binary';

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
}

/** Where a document went. */
export type Delivery =
  | { kind: 'url'; url: string; filename: string; expiresAt: number; fileId: string }
  | { kind: 'binary'; pdf: Buffer; filename: string }
  | { kind: 's3'; bucket: string; key: string; filename: string };

export interface GenerationResult {
  delivery: Delivery;
  creditsRemaining: number;
  /** The PDFGEN transaction behind it. */
  transactionRef: string;
  renderMs: number;
}

/** Uploads to the customer's own bucket (the S3 integration). */
export interface CustomerStorage {
  /** The bucket and key a document would go to; throws INVALID_REQUEST when S3 is not configured. */
  resolveTarget(accountId: string, target: { filepath?: string | null; bucket?: string | null; filename: string }): Promise<{ bucket: string; key: string }>;
  upload(accountId: string, target: { bucket: string; key: string }, pdf: Buffer): Promise<void>;
}

export interface DocumentService {
  /** Checks what can be checked before any charge: the template and the delivery target. */
  prepare(accountId: string, templateId: string, options: GenerationOptions): Promise<Template>;
  /** Synchronous generation: prepare, debit, produce; refunds once on failure. */
  generate(accountId: string, templateId: string, data: Record<string, unknown>, options: GenerationOptions): Promise<GenerationResult>;
  /** Renders and delivers an already-paid document (the worker's entry). */
  produce(accountId: string, template: Template, data: Record<string, unknown>, options: GenerationOptions, signal?: AbortSignal): Promise<{ delivery: Delivery; renderMs: number }>;
  /** A free, stamped preview of unsaved template text (the studio). */
  preview(input: { html: string; css?: string | null; page?: Template['page']; data?: Record<string, unknown> | null }): Promise<Buffer>;
}

export interface DocumentDeps {
  templates: TemplateService;
  ledger: CreditLedger;
  renderer: PdfRenderer;
  files: FileService;
  customerStorage?: CustomerStorage;
  logger: Logger;
}

/** `invoice` → `invoice.pdf`; a trailing `.pdf` given by the caller is not doubled. */
export function pdfFilename(name: string | null | undefined): string {
  const base = (name ?? '').replace(/\.pdf$/i, '') || 'document';
  return `${base}.pdf`;
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
 * Waits between refund attempts. A generation that fails because the database went away (a restart,
 * a failover) cannot refund at once either; the refund is idempotent (one per PDFGEN), so it is
 * retried for ~8 s before the ledger is left owing the credit (issue 7's PostgreSQL drill).
 */
const REFUND_RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000];

export function createDocumentService(deps: DocumentDeps): DocumentService {
  const { templates, ledger, renderer, files, customerStorage, logger } = deps;

  async function refundWithRetries(accountId: string, transactionRef: string): Promise<boolean> {
    for (const delayMs of [...REFUND_RETRY_DELAYS_MS, undefined]) {
      try {
        return await ledger.refund(accountId, transactionRef);
      } catch (error) {
        // A coded error (unknown account…) will not change on retry; only infrastructure failures do.
        if (delayMs === undefined || isAppError(error)) throw error;
        logger.warn({ err: error, transactionRef, retryInMs: delayMs }, 'refund failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
    return false;
  }

  /** The customer-bucket uploader; INVALID_REQUEST when this deployment has none. */
  function s3Storage(): CustomerStorage {
    if (!customerStorage) throw new AppError('INVALID_REQUEST', 'S3 storage is not configured for this account; configure it with POST /v1/integrations/s3.');
    return customerStorage;
  }

  async function deliver(accountId: string, pdf: Buffer, options: GenerationOptions): Promise<Delivery> {
    const filename = pdfFilename(options.filename);
    if (options.storeS3) {
      const storage = s3Storage();
      const target = await storage.resolveTarget(accountId, { filepath: options.s3Filepath, bucket: options.s3Bucket, filename });
      await storage.upload(accountId, target, pdf);
      return { kind: 's3', bucket: target.bucket, key: target.key, filename };
    }
    if (options.exportType === 'binary') return { kind: 'binary', pdf, filename };
    const stored = await files.store(accountId, pdf, filename, options.expirationSeconds);
    return { kind: 'url', url: stored.url, filename, expiresAt: stored.expiresAt, fileId: stored.fileId };
  }

  const service: DocumentService = {
    async prepare(accountId, templateId, options) {
      checkS3Filepath(options.s3Filepath);
      const template = await templates.get(accountId, templateId);
      if (options.storeS3) {
        await s3Storage().resolveTarget(accountId, { filepath: options.s3Filepath, bucket: options.s3Bucket, filename: pdfFilename(options.filename) });
      }
      return template;
    },

    async produce(accountId, template, data, options, signal) {
      const started = performance.now();
      const rendered = await renderer.render({
        template: { html: template.html, css: template.css, page: template.page },
        data: expandDottedKeys(data),
        signal,
      });
      const pdf = options.pdfVariant ? await toPdfA(rendered.pdf, options.pdfVariant, { title: template.name }) : rendered.pdf;
      const renderMs = Math.round(performance.now() - started);
      return { delivery: await deliver(accountId, pdf, options), renderMs };
    },

    async generate(accountId, templateId, data, options) {
      const template = await service.prepare(accountId, templateId, options);
      const debit = await ledger.debit(accountId, templateId);
      try {
        const { delivery, renderMs } = await service.produce(accountId, template, data, options);
        await ledger.recordExecTime(debit.transactionRef, renderMs).catch((error) => logger.warn({ err: error }, 'could not record exec time'));
        return { delivery, creditsRemaining: debit.balance, transactionRef: debit.transactionRef, renderMs };
      } catch (error) {
        const refunded = await refundWithRetries(accountId, debit.transactionRef).catch((refundError) => {
          // The generation failed and so did its refund: loud, because the ledger now owes a credit.
          logger.error({ err: refundError, transactionRef: debit.transactionRef }, 'refund failed after a failed generation');
          return false;
        });
        logger.info({ templateId, refunded, code: (error as AppError).code }, 'generation failed; credit refunded');
        throw error;
      }
    },

    async preview(input) {
      const rendered = await renderer.render({
        template: { html: input.html, css: input.css ?? null, page: input.page ?? null },
        data: expandDottedKeys(input.data ?? {}),
        preview: true,
      });
      return rendered.pdf;
    },
  };
  return service;
}
