/**
 * PDF tools: merge, extract pages, rotate (TemplateFox's `/v1/pdf-tools/*`); sign and verify (sign.ts). One credit each,
 * charged on delivery through the same flow as `POST /v1/pdf/create` (documents/charged-run.ts:
 * Idempotency-Key, reserve, post on delivery, void on failure). Everything that can be wrong with the
 * request — the page selection or rotation, an input that cannot be downloaded, is not a PDF, is
 * encrypted, has too many pages — is found in `prepare`, before the credit is reserved: a 422 that
 * costs nothing, stores nothing. The work itself runs in qpdf (qpdf.ts says why).
 */
import type { TextLayout } from '../finishing/requested/text-layout.js';
import type { ChargedRunner, Delivery, ExportType, GenerationResult } from '../documents/charged-run.js';
import { deliverToClient, pdfFilename } from '../documents/charged-run.js';
import type { MetadataRequest, ProtectRequest, WatermarkRequest } from '../finishing/requested/finishing-requests.js';
import type { AssetReader } from '../finishing/requested/watermark.js';
import {
  prepareFlatten,
  prepareMetadata,
  prepareProtect,
  prepareUnlock,
  prepareWatermarkTool,
  unlockPdf,
  watermarkPdf,
  writeMetadata,
} from './finishing-tools.js';
import { prepareSplit, splitPdf, type SplitPlan } from './split.js';
import { zipParts } from './zip-parts.js';
import type { FileService } from '../files/files.js';
import type { IdempotentRequest } from '../idempotency/idempotency.js';
import { isAppError, ValidationError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { extractPages, prepareExtraction } from './extract-pages.js';
import { mergePdfs, prepareMerge } from './merge.js';
import type { PdfInputLimits, PdfSource } from './pdf-inputs.js';
import type { Qpdf } from '../pdf/qpdf.js';
import { prepareRotation, rotatePages } from './rotate.js';
import { prepareSigning, signDocument, verifyDocument } from './sign.js';
import type { SignatureOptions, Signing } from '../signing/sign.js';
import type { SignatureReport } from '../signing/verify.js';

export type { PdfSource } from './pdf-inputs.js';

/** How the result is handed over: as for `POST /v1/pdf/create` (`url` or `binary`). */
export interface ToolOutput {
  exportType: ExportType;
  /** Link lifetime for `url` (60..604800 s). */
  expirationSeconds: number;
  /** Download name without `.pdf`. */
  filename: string;
}

/** What every tool request carries. */
export interface ToolRequest {
  accountId: string;
  output: ToolOutput;
  /** With an Idempotency-Key: a repeat gets the first answer, charged once. */
  idempotency?: IdempotentRequest;
}

export interface MergeRequest extends ToolRequest {
  pdfs: PdfSource[];
}

export interface ExtractPagesRequest extends ToolRequest {
  pdf: PdfSource;
  /** `1-3, 5`: 1-based pages and ranges; the order given is kept. */
  pages: string;
}

export interface RotateRequest extends ToolRequest {
  pdf: PdfSource;
  /** Every page, clockwise: 0, 90, 180 or 270. */
  rotation?: number | null;
  /** Some pages: `{"3": 90}`. */
  pageRotations?: Record<string, number> | null;
}

export interface SignRequest extends ToolRequest {
  pdf: PdfSource;
  signature: SignatureOptions;
}

/** A tool on one PDF, with what it needs besides the PDF. */
export interface OneInputRequest<T = undefined> extends ToolRequest {
  pdf: PdfSource;
  with: T;
}

/** Split's answer: a link per part (`url`), or one zip as a link (`zip`) or as bytes (`binary`). */
export interface SplitRequest extends OneInputRequest<SplitPlan> {
  parts: 'links' | 'zip';
}

/** The PDF tools; each answers like a synchronous create (link or bytes, settled by the HTTP layer). */
export interface PdfToolService {
  merge(request: MergeRequest): Promise<GenerationResult>;
  extractPages(request: ExtractPagesRequest): Promise<GenerationResult>;
  rotate(request: RotateRequest): Promise<GenerationResult>;
  sign(request: SignRequest): Promise<GenerationResult>;
  /** Free: the signature report, no file. */
  verify(request: { accountId: string; pdf: PdfSource }): Promise<SignatureReport>;
  split(request: SplitRequest): Promise<GenerationResult>;
  flatten(request: OneInputRequest): Promise<GenerationResult>;
  watermark(request: OneInputRequest<WatermarkRequest>): Promise<GenerationResult>;
  metadata(request: OneInputRequest<MetadataRequest>): Promise<GenerationResult>;
  protect(request: OneInputRequest<ProtectRequest>): Promise<GenerationResult>;
  unlock(request: OneInputRequest<{ password: string }>): Promise<GenerationResult>;
}

export interface PdfToolDeps {
  charged: ChargedRunner;
  files: FileService;
  qpdf: Qpdf;
  signing: Signing;
  limits: PdfInputLimits & { maxMergeInputs: number };
  logger: Logger;
  /** A watermark's image asset (the account's library). */
  readAsset: AssetReader;
  /** Lays out watermark text in scripts that need shaping (Chromium); without it such text is a 422. */
  layOutText?: TextLayout;
}

type ToolName =
  | 'merge'
  | 'extract-pages'
  | 'rotate'
  | 'sign'
  | 'split'
  | 'flatten'
  | 'watermark'
  | 'metadata'
  | 'protect'
  | 'unlock';

export function createPdfToolService(deps: PdfToolDeps): PdfToolService {
  const { charged, files, qpdf, signing, limits, logger } = deps;

  /** prepare (free) → reserve → make → deliver → post; the outcome is logged once, as generations are. */
  function runTool<P>(
    tool: ToolName,
    request: ToolRequest,
    prepare: () => Promise<P>,
    make: (prepared: P) => Promise<Buffer>,
  ): Promise<GenerationResult> {
    return runDelivering(tool, request, prepare, async (prepared) =>
      deliverToClient(files, request.accountId, await make(prepared), request.output),
    );
  }

  /** runTool for a result delivered its own way (split's several files). */
  async function runDelivering<P>(
    tool: ToolName,
    request: ToolRequest,
    prepare: () => Promise<P>,
    make: (prepared: P) => Promise<Delivery>,
  ): Promise<GenerationResult> {
    const startedAt = performance.now();
    const log = (outcome: string, credits: 0 | 1, extra: Record<string, unknown> = {}) =>
      logger.info(
        {
          accountId: request.accountId,
          tool,
          outcome,
          charged: credits,
          durationMs: Math.round(performance.now() - startedAt),
          ...extra,
        },
        'pdf tool',
      );
    try {
      return await charged.run({
        accountId: request.accountId,
        templateId: null,
        tool,
        idempotency: request.idempotency,
        log,
        prepare,
        produce: async (prepared) => {
          const started = performance.now();
          const delivery = await make(prepared);
          return { delivery, execMs: Math.round(performance.now() - started) };
        },
      });
    } catch (error) {
      log(isAppError(error) ? error.code : error instanceof ValidationError ? 'invalid' : 'error', 0);
      throw error;
    }
  }

  return {
    merge(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'merge',
        request,
        () => prepareMerge(request.pdfs, limits, reader),
        (inputs) => mergePdfs(inputs, reader),
      );
    },
    extractPages(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'extract-pages',
        request,
        () => prepareExtraction(request.pdf, request.pages, limits, reader),
        (prepared) => extractPages(prepared, reader),
      );
    },
    rotate(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'rotate',
        request,
        () => prepareRotation(request.pdf, request, limits, reader),
        (prepared) => rotatePages(prepared, reader),
      );
    },
    sign(request) {
      const reader = { qpdf, signing, accountId: request.accountId };
      return runTool(
        'sign',
        request,
        () => prepareSigning(request.pdf, request.signature, limits, reader),
        (prepared) => signDocument(prepared, reader),
      );
    },
    verify(request) {
      return verifyDocument(request.pdf, limits, { qpdf, signing, accountId: request.accountId });
    },
    split(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runDelivering(
        'split',
        request,
        () => prepareSplit(request.pdf, request.with, limits, reader),
        async (prepared) => {
          const parts = await splitPdf(prepared, reader);
          const base = pdfFilename(request.output.filename).replace(/\.pdf$/, '');
          const named = parts.map((bytes, i) => ({
            name: `${base}-${prepared.parts[i]!.label}.pdf`,
            label: prepared.parts[i]!.label,
            bytes,
          }));
          if (request.parts === 'zip') {
            const zip = await zipParts(named);
            return deliverToClient(files, request.accountId, zip, request.output, {
              filename: `${base}.zip`,
              contentType: 'application/zip',
            });
          }
          const stored = await Promise.all(
            named.map((part) =>
              files.store(
                request.accountId,
                part.bytes,
                part.name,
                request.output.expirationSeconds,
                'application/pdf',
              ),
            ),
          );
          return {
            kind: 'urls',
            files: stored.map((file, i) => ({
              url: file.url,
              filename: named[i]!.name,
              label: named[i]!.label,
              fileId: file.fileId,
            })),
            expiresAt: stored[0]?.expiresAt ?? Date.now(),
          };
        },
      );
    },
    flatten(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'flatten',
        request,
        () => prepareFlatten(request.pdf, limits, reader),
        (pdf) => qpdf.flatten(pdf, request.accountId),
      );
    },
    watermark(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'watermark',
        request,
        () =>
          prepareWatermarkTool(request.pdf, request.with, {
            limits,
            reader,
            readAsset: deps.readAsset,
            layOutText: deps.layOutText,
          }),
        watermarkPdf,
      );
    },
    metadata(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'metadata',
        request,
        () => prepareMetadata(request.pdf, request.with, limits, reader),
        (pdf) => writeMetadata(pdf, request.with),
      );
    },
    protect(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'protect',
        request,
        () => prepareProtect(request.pdf, request.with, limits, reader),
        (prepared) => qpdf.encrypt(prepared.pdf, prepared.protection, request.accountId),
      );
    },
    unlock(request) {
      const reader = { qpdf, accountId: request.accountId };
      return runTool(
        'unlock',
        request,
        () => prepareUnlock(request.pdf, request.with.password, limits, reader),
        (pdf) => unlockPdf(pdf, request.with.password, reader),
      );
    },
  };
}
