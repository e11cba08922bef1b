/**
 * PDF tools: merge, extract pages, rotate (TemplateFox's `/v1/pdf-tools/*`); sign and verify (sign.ts); the free
 * accessibility check (check-accessibility.ts). One credit each (the checks free),
 * charged on delivery through the same flow as `POST /v1/pdf/create` (credits/paid-request.ts:
 * Idempotency-Key, reserve, post on delivery, void on failure). Everything that can be wrong with the
 * request — the page selection or rotation, an input that cannot be downloaded, is not a PDF, is
 * encrypted, has too many pages — is found in `prepare`, before the credit is reserved: a 422 that
 * costs nothing, stores nothing. The work itself runs in qpdf (qpdf.ts says why). Every tool but sign
 * and verify would break an input's signatures, and refuses a signed input unless the request allows
 * it (signed-inputs.ts).
 */
import type { TextLayout } from '../finishing/requested/text-layout.js';
import type { ChargedRunner, GenerationResult } from '../credits/paid-request.js';
import { deliverToClient, pdfFilename, type Delivery, type ExportType } from '../files/delivery.js';
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
import type { AccessibilityReport } from '../accessibility/pdf-ua.js';
import { checkAccessibility } from './check-accessibility.js';
import type { Logger } from '../shared/log.js';
import { extractPages, prepareExtraction } from './extract-pages.js';
import { mergePdfs, prepareMerge } from './merge.js';
import type { InputReader, PdfInputLimits, PdfSource } from './pdf-inputs.js';
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
  /** `allow_breaking_signatures`: a signed input is worked on, with a warning, instead of refused. @defaultValue false */
  allowBreakingSignatures?: boolean;
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
  /** Free: the PDF/UA machine check's report (accessibility/pdf-ua.ts), no file. */
  checkAccessibility(request: { accountId: string; pdf: PdfSource }): Promise<AccessibilityReport>;
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

/** What each tool that breaks signatures does to a signed input, in words (signed-inputs.ts); sign keeps them. */
const BREAKS_SIGNATURES: Partial<Record<ToolName, { doing: string; newDocument: boolean }>> = {
  merge: { doing: 'merging it', newDocument: true },
  'extract-pages': { doing: 'extracting pages from it', newDocument: true },
  split: { doing: 'splitting it', newDocument: true },
  rotate: { doing: 'rotating its pages', newDocument: false },
  flatten: { doing: 'flattening it', newDocument: false },
  watermark: { doing: 'watermarking it', newDocument: false },
  metadata: { doing: 'writing its document information', newDocument: false },
  protect: { doing: 'encrypting it', newDocument: false },
  unlock: { doing: 'removing its encryption', newDocument: false },
};

export function createPdfToolService(deps: PdfToolDeps): PdfToolService {
  const { charged, files, qpdf, signing, limits, logger } = deps;

  /** How a tool's inputs are read: the account, qpdf, and the tool's rule for signed inputs with the warnings it collects. */
  function readerFor(tool: ToolName, request: ToolRequest): InputReader {
    const breaks = BREAKS_SIGNATURES[tool];
    const signed = breaks && { ...breaks, allowBreaking: request.allowBreakingSignatures === true, warnings: [] };
    return { qpdf, accountId: request.accountId, warnings: [], ...(signed ? { signed } : {}) };
  }

  /** prepare (free) → reserve → make → deliver → post; the outcome is logged once, as generations are. */
  function runTool<P>(
    tool: ToolName,
    request: ToolRequest,
    prepare: (reader: InputReader) => Promise<P>,
    make: (prepared: P, reader: InputReader) => Promise<Buffer>,
  ): Promise<GenerationResult> {
    return runDelivering(tool, request, prepare, async (prepared, reader) =>
      deliverToClient(files, request.accountId, await make(prepared, reader), request.output),
    );
  }

  /** runTool for a result delivered its own way (split's several files). */
  async function runDelivering<P>(
    tool: ToolName,
    request: ToolRequest,
    prepare: (reader: InputReader) => Promise<P>,
    make: (prepared: P, reader: InputReader) => Promise<Delivery>,
  ): Promise<GenerationResult> {
    const startedAt = performance.now();
    const reader = readerFor(tool, request);
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
        prepare: () => prepare(reader),
        produce: async (prepared) => {
          const started = performance.now();
          const delivery = await make(prepared, reader);
          const warnings = [...(reader.warnings ?? []), ...(reader.signed?.warnings ?? [])];
          return { delivery, execMs: Math.round(performance.now() - started), warnings };
        },
      });
    } catch (error) {
      log(isAppError(error) ? error.code : error instanceof ValidationError ? 'invalid' : 'error', 0);
      throw error;
    }
  }

  return {
    merge(request) {
      return runTool(
        'merge',
        request,
        (reader) => prepareMerge(request.pdfs, limits, reader),
        (inputs, reader) => mergePdfs(inputs, reader),
      );
    },
    extractPages(request) {
      return runTool(
        'extract-pages',
        request,
        (reader) => prepareExtraction(request.pdf, request.pages, limits, reader),
        (prepared, reader) => extractPages(prepared, reader),
      );
    },
    rotate(request) {
      return runTool(
        'rotate',
        request,
        (reader) => prepareRotation(request.pdf, request, limits, reader),
        (prepared, reader) => rotatePages(prepared, reader),
      );
    },
    sign(request) {
      const reader = { signing, ...readerFor('sign', request) };
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
    checkAccessibility(request) {
      return checkAccessibility(request.pdf, limits, { qpdf, accountId: request.accountId });
    },
    split(request) {
      return runDelivering(
        'split',
        request,
        (reader) => prepareSplit(request.pdf, request.with, limits, reader),
        async (prepared, reader) => {
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
      return runTool(
        'flatten',
        request,
        (reader) => prepareFlatten(request.pdf, limits, reader),
        (pdf) => qpdf.flatten(pdf, request.accountId),
      );
    },
    watermark(request) {
      return runTool(
        'watermark',
        request,
        (reader) =>
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
      return runTool(
        'metadata',
        request,
        (reader) => prepareMetadata(request.pdf, request.with, limits, reader),
        (pdf) => writeMetadata(pdf, request.with),
      );
    },
    protect(request) {
      return runTool(
        'protect',
        request,
        (reader) => prepareProtect(request.pdf, request.with, limits, reader),
        (prepared) => qpdf.encrypt(prepared.pdf, prepared.protection, request.accountId),
      );
    },
    unlock(request) {
      return runTool(
        'unlock',
        request,
        (reader) => prepareUnlock(request.pdf, request.with.password, limits, reader),
        (pdf, reader) => unlockPdf(pdf, request.with.password, reader),
      );
    },
  };
}
