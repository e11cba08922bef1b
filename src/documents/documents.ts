/**
 * Document generation: the one use case behind both doors. `POST /v1/pdf/create` calls `generate`;
 * the job worker calls `produce` for a job accepted by `create-async`.
 *
 * A synchronous generation, in order: the idempotency key (replay, 409, 422) → the template (404/403)
 * → the S3 target when `store_s3` (400 when not configured) → the credit, reserved (402) → render →
 * PDF/A → deliver (signed link, bytes, or the customer's bucket) → the charge is posted. Any failure
 * after the reservation voids it (exactly one REFUND), then the error. When the charge is posted
 * (docs/generation.md "What you are charged for"):
 * - with an Idempotency-Key: when the answer is stored for replay, in the same database transaction,
 *   so a client cut off from the answer gets it again by retrying, charged once;
 * - without one: when the answer has been handed to the client's connection (`settle(true)` from the
 *   HTTP layer); a connection that closed first voids it.
 * A process that dies in between holds a reservation nobody renews: charges.ts voids it after its lease.
 */
import type { Charges, Reservation } from '../credits/charges.js';
import type { Db } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import type { FileService } from '../files/files.js';
import type { IdempotencyService, IdempotentRequest, KeyClaim } from '../idempotency/idempotency.js';
import type { PdfRenderer } from '../rendering/pdf-renderer.js';
import { withDocumentInfo } from '../rendering/document-info.js';
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
  /** A template version's tag or number; omitted/null renders the draft. */
  version?: string | number | null;
}

/** Where a document went. */
export type Delivery =
  | { kind: 'url'; url: string; filename: string; expiresAt: number; fileId: string }
  | { kind: 'binary'; pdf: Buffer; filename: string }
  | { kind: 's3'; bucket: string; key: string; filename: string };

/** A synchronous generation as the caller asks for it. */
export interface GenerationRequest {
  accountId: string;
  templateId: string;
  data: Record<string, unknown>;
  options: GenerationOptions;
  /** With an Idempotency-Key: a repeat gets the first answer, charged once. */
  idempotency?: IdempotentRequest;
}

/** The answer of a synchronous generation. */
export interface GenerationResult {
  delivery: Delivery;
  creditsRemaining: number;
  /** The first answer to this Idempotency-Key, given again. */
  replayed: boolean;
  /**
   * Tells the service whether the answer reached the client (the HTTP layer calls it once the
   * response finished, or the connection closed before). Without an Idempotency-Key this posts or
   * voids the charge; otherwise (already posted with the stored answer) it does nothing.
   */
  settle(delivered: boolean): Promise<void>;
}

/** Uploads to the customer's own bucket (the S3 integration). */
export interface CustomerStorage {
  /** The bucket and key a document would go to; throws INVALID_REQUEST when S3 is not configured. */
  resolveTarget(accountId: string, target: { filepath?: string | null; bucket?: string | null; filename: string }): Promise<{ bucket: string; key: string }>;
  upload(accountId: string, target: { bucket: string; key: string }, pdf: Buffer): Promise<void>;
}

/** What a preview renders: template text not saved yet, or a saved template (its draft, or a version). */
export type PreviewSource =
  | { kind: 'text'; html: string; css: string | null; page: Template['page'] }
  | { kind: 'saved'; templateId: string; version: string | number | null };

export interface DocumentService {
  /** Checks what can be checked before any charge: the template and the delivery target. */
  prepare(accountId: string, templateId: string, options: GenerationOptions): Promise<Template>;
  /** Synchronous generation: key, prepare, reserve, produce, post; voids once on failure. */
  generate(request: GenerationRequest): Promise<GenerationResult>;
  /** Renders and delivers an already-paid document (the worker's entry). */
  produce(accountId: string, template: Template, data: Record<string, unknown>, options: GenerationOptions, signal?: AbortSignal): Promise<{ delivery: Delivery; renderMs: number }>;
  /**
   * A free, stamped preview (the studio), rendered for `accountId` at preview priority: of unsaved text,
   * or of a saved template's draft or version (404s as for create; `data` omitted → its sample data).
   */
  preview(accountId: string, input: { source: PreviewSource; data?: Record<string, unknown> | null }): Promise<Buffer>;
}

export interface DocumentDeps {
  db: Db;
  templates: TemplateService;
  charges: Charges;
  idempotency: IdempotencyService;
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

/** How long a binary answer is kept for idempotent replays (the key's own lifetime). */
const BINARY_REPLAY_SECONDS = 86_400;

/** A delivery as stored with its idempotency key: JSON as it is, bytes as a reference to a stored file. */
type StoredDelivery = { delivery: Exclude<Delivery, { kind: 'binary' }>; creditsRemaining: number } | { binaryFileId: string; filename: string; creditsRemaining: number };

export function createDocumentService(deps: DocumentDeps): DocumentService {
  const { db, templates, charges, idempotency, renderer, files, customerStorage, logger } = deps;
  const settled = async () => undefined;

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

  async function storedAnswer(accountId: string, delivery: Delivery, creditsRemaining: number): Promise<StoredDelivery> {
    if (delivery.kind !== 'binary') return { delivery, creditsRemaining };
    const file = await files.store(accountId, delivery.pdf, delivery.filename, BINARY_REPLAY_SECONDS);
    return { binaryFileId: file.fileId, filename: delivery.filename, creditsRemaining };
  }

  async function replay(stored: StoredDelivery): Promise<GenerationResult> {
    if ('delivery' in stored) return { delivery: stored.delivery, creditsRemaining: stored.creditsRemaining, replayed: true, settle: settled };
    const pdf = await files.read(stored.binaryFileId);
    if (!pdf) throw new AppError('FILE_NOT_FOUND', 'The stored result of this idempotent request is gone; retry with a new Idempotency-Key.');
    return { delivery: { kind: 'binary', pdf, filename: stored.filename }, creditsRemaining: stored.creditsRemaining, replayed: true, settle: settled };
  }

  /** Reserve → produce; on failure the reservation is voided (one REFUND) and the error rethrown. */
  async function produceReserved(request: GenerationRequest, template: Template): Promise<{ reservation: Reservation; delivery: Delivery; renderMs: number }> {
    const reservation = await charges.reserve(request.accountId, request.templateId, { request: true });
    try {
      const { delivery, renderMs } = await service.produce(request.accountId, template, request.data, request.options);
      return { reservation, delivery, renderMs };
    } catch (error) {
      await charges.void(reservation);
      throw error;
    }
  }

  /** With a key: the charge is posted together with the stored answer, so a replay never charges again. */
  async function generateOnce(request: GenerationRequest, claim: Extract<KeyClaim, { kind: 'claimed' }>): Promise<GenerationResult> {
    try {
      const template = await service.prepare(request.accountId, request.templateId, request.options);
      const { reservation, delivery, renderMs } = await produceReserved(request, template);
      try {
        const answer = await storedAnswer(request.accountId, delivery, reservation.balance);
        await withTransaction(db, async (trx) => {
          await idempotency.complete(claim, answer, trx);
          await charges.post(reservation, renderMs, trx);
        });
      } catch (error) {
        await charges.void(reservation);
        throw error;
      }
      return { delivery, creditsRemaining: reservation.balance, replayed: false, settle: settled };
    } catch (error) {
      await idempotency.release(claim);
      throw error;
    }
  }

  const service: DocumentService = {
    async prepare(accountId, templateId, options) {
      checkS3Filepath(options.s3Filepath);
      const template = options.version == null ? await templates.get(accountId, templateId) : await templates.versions.resolve(accountId, templateId, options.version);
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
        accountId,
        kind: 'document',
      });
      const titled = await withDocumentInfo(rendered.pdf, template.name);
      const pdf = options.pdfVariant ? await toPdfA(titled, options.pdfVariant) : titled;
      const renderMs = Math.round(performance.now() - started);
      return { delivery: await deliver(accountId, pdf, options), renderMs };
    },

    async generate(request) {
      const startedAt = performance.now();
      const log = (outcome: string, extra: Record<string, unknown> = {}) =>
        logger.info({ accountId: request.accountId, templateId: request.templateId, outcome, durationMs: Math.round(performance.now() - startedAt), ...extra }, 'generation');
      try {
        if (request.idempotency) {
          const claim = await idempotency.claim(request.accountId, request.idempotency);
          if (claim.kind === 'replay') {
            const replayed = await replay(claim.stored as StoredDelivery);
            log('replayed', { charged: 0 });
            return replayed;
          }
          const result = await generateOnce(request, claim);
          log('delivered', { charged: 1, exportType: result.delivery.kind });
          return result;
        }
        const template = await service.prepare(request.accountId, request.templateId, request.options);
        const { reservation, delivery, renderMs } = await produceReserved(request, template);
        let settledOnce = false;
        return {
          delivery,
          creditsRemaining: reservation.balance,
          replayed: false,
          settle: async (delivered) => {
            if (settledOnce) return;
            settledOnce = true;
            try {
              if (delivered) await charges.post(reservation, renderMs);
              else await charges.void(reservation);
              log(delivered ? 'delivered' : 'connection_closed', { charged: delivered ? 1 : 0, exportType: delivery.kind });
            } catch (error) {
              // The reservation stays unresolved; once its lease runs out, recovery voids it (no charge).
              logger.error({ err: error, transactionRef: reservation.transactionRef }, 'could not post a delivered document; it will be refunded when its lease runs out');
            }
          },
        };
      } catch (error) {
        log(isAppError(error) ? error.code : error instanceof ValidationError ? 'invalid' : 'error', { charged: 0 });
        throw error;
      }
    },

    async preview(accountId, { source, data }) {
      const template =
        source.kind === 'text'
          ? { html: source.html, css: source.css, page: source.page, sampleData: null }
          : source.version === null
            ? await templates.get(accountId, source.templateId)
            : await templates.versions.resolve(accountId, source.templateId, source.version);
      const rendered = await renderer.render({
        template: { html: template.html, css: template.css, page: template.page },
        data: expandDottedKeys(data ?? template.sampleData ?? {}),
        preview: true,
        accountId,
        kind: 'preview',
      });
      return withDocumentInfo(rendered.pdf, 'Preview');
    },
  };
  return service;
}
