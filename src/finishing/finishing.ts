/**
 * The one step after printing, called once per document from documents.ts: what Chromium printed
 * becomes what is delivered. In this order, each only when the options ask for it:
 *   1. the PREVIEW stamp (a free preview; outside the Chromium slot, where no template can reach it);
 *   2. Pressroom's document info (title, producer; document-info.ts);
 *   3. PDF/A, with an e-invoice's attachment and XMP (pdfa.ts);
 *   4. the request's watermark (requested/watermark.ts);
 *   4a. PDF/UA (accessibility/pdf-ua.ts): untagged painting as artifacts, the XMP identifier — after
 *      the watermark, which it makes an artifact too — and the PDF/UA check of the file as it is
 *      written (compaction, the signature and protection leave the tags as they are): a failure is
 *      a 422 naming the checkpoints, nothing charged;
 *   5. compaction into object streams on a thread (pdf-compaction.ts), within what is left of the
 *      render deadline; never fails the document (a PDF it cannot compact leaves as it is);
 *   6. the signature (signing/sign.ts): an incremental update over everything before it, which a
 *      later rewrite would break;
 *   7. the request's protection, AES-256 by qpdf (requested/protect.ts): it rewrites the whole file,
 *      so it comes last, and a document cannot ask for both a signature and protection (documents.ts
 *      refuses the pair before the charge: the encryption would break the signature).
 * The request's `metadata` goes into the Info dictionary with step 2, before PDF/A: PDF/A wants Info
 * and XMP equal, and pdfa.ts writes both from Info.
 * A long PDF that Chromium spooled to a file (not PDF/A, not a preview) goes through 2 and 4 from file
 * to file, never held in memory (a signed document is never spooled: libpdf signs bytes in memory).
 */
import type { Logger } from '../shared/log.js';
import type { Spool, SpooledFile } from '../pdf/spool.js';
import { CompactionPool, type Compaction, type CompactionTask, type FileCompaction } from './compaction-pool.js';
import { withDocumentInfo, withDocumentInfoInFile } from './document-info.js';
import { toPdfA, type PdfAMeta, type PdfAVariant } from './pdfa.js';
import { stampPreview } from './preview-stamp.js';
import type { PoolStats } from '../scheduling/fair-scheduler.js';
import type { SignatureOptions, Signing } from '../signing/sign.js';
import type { InfoEntries } from './document-info.js';
import type { PdfProtection, Qpdf } from '../pdf/qpdf.js';
import type { PreparedWatermark } from './requested/watermark.js';
import { drawWatermarkOffThread } from './requested/watermark-thread.js';
import { makePdfUaOffThread } from '../accessibility/accessibility-thread.js';
import { ValidationError } from '../shared/errors.js';

export type { Compaction, FileCompaction } from './compaction-pool.js';

/** What to do to one printed PDF. */
export interface FinishOptions {
  /** Whose document: the compaction threads are shared fairly between accounts. */
  accountId: string;
  /** Paid documents go before free previews on the compaction threads. */
  kind: 'document' | 'preview';
  /** The Info title when the document names none (its template's name, or `Preview`). */
  title: string;
  /** Stamp PREVIEW on every page (previews only). @defaultValue false */
  previewStamp?: boolean;
  /** Make it PDF/A, with what an e-invoice adds (its attachment and XMP). */
  pdfa?: { variant: PdfAVariant; extras?: Pick<PdfAMeta, 'attachments' | 'xmpExtension'> } | null;
  /** What is left of the render deadline: compaction's budget. */
  timeoutMs: number;
  /** Sign it, last (`sign` on create; checked before the charge by Signing.prepare). */
  sign?: SignatureOptions | null;
  /** The request's watermark, checked (documents.ts prepares it before the charge). */
  watermark?: PreparedWatermark | null;
  /** The request's `metadata`, over Pressroom's Title and Creator. */
  metadata?: InfoEntries | null;
  /** The request's `protect`: encrypted last (never with PDF/A, refused before the charge). */
  protect?: PdfProtection | null;
  /** PDF/UA-1: made and checked (4a); the PDF was printed tagged. */
  pdfUa?: boolean;
}

/** A finished PDF: in memory, or in a spool file (with the files to remove once it is delivered). */
export type FinishedPdf = { pdf: Buffer } | { file: SpooledFile; temporaryPaths: string[] };

/** How each compaction ended, for the metrics (ops/instrument.ts). */
export type CompactionObserver = (result: Compaction | FileCompaction, seconds: number) => void;

export interface Finishing {
  finish(printed: Buffer | SpooledFile, options: FinishOptions): Promise<FinishedPdf>;
  /** The compaction threads' pool, for /metrics. */
  stats(): PoolStats;
  close(): Promise<void>;
}

export interface FinishingDeps {
  /** Compaction threads at most (one per render slot: compaction follows printing, off the slot). */
  threads: number;
  /** Where a spooled PDF's compacted copy is written. */
  spool?: Spool;
  /** Signs documents that ask for it. */
  signing?: Signing;
  logger: Logger;
  onCompaction?: CompactionObserver;
  /** Encrypts for `protect`; without it a document asking for protection fails. */
  qpdf?: Qpdf;
}

export function createFinishing(deps: FinishingDeps): Finishing {
  const pool = new CompactionPool(deps.threads);

  function observed<T extends Compaction | FileCompaction>(result: T, startedAt: number, bytes: number): T {
    deps.onCompaction?.(result, (performance.now() - startedAt) / 1000);
    if (!result.compacted && result.reason !== 'no smaller')
      deps.logger.info({ reason: result.reason, bytes }, 'PDF left uncompacted');
    return result;
  }

  async function finishBytes(pdf: Buffer, options: FinishOptions, task: CompactionTask): Promise<Buffer> {
    const finished = await finishUnsigned(pdf, options, task);
    if (options.sign && options.protect) throw new Error('a document cannot be both signed and protected');
    if (options.sign) {
      if (!deps.signing) throw new Error('a document to sign without signing set up');
      return deps.signing.sign(finished, options.sign, {
        accountId: options.accountId,
        kind: task.ticket.kind,
        loc: ['body', 'sign'],
      });
    }
    return options.protect ? protect(finished, options.protect, options.accountId) : finished;
  }

  /** Steps 1 to 5: everything before the signature. */
  async function finishUnsigned(pdf: Buffer, options: FinishOptions, task: CompactionTask): Promise<Buffer> {
    const stamped = options.previewStamp ? await stampPreview(pdf) : pdf;
    const titled = await withDocumentInfo(stamped, options.title, options.metadata ?? {});
    const variant = options.pdfa?.variant;
    const archival = variant
      ? await toPdfA(titled, variant, { ...options.pdfa?.extras, accountId: options.accountId })
      : titled;
    const marked = options.watermark
      ? await drawWatermarkOffThread(archival, options.watermark, { strictPages: false, loc: ['body', 'watermark'] })
      : archival;
    const accessible = options.pdfUa ? await makeAccessible(marked, options.accountId) : marked;
    // PDF/A-1b is PDF 1.4, which may not have object streams; PDF/A-2b/3b (PDF 1.7) may.
    const startedAt = performance.now();
    return variant === 'pdf/a-1b'
      ? accessible
      : observed(await pool.compact(accessible, task), startedAt, accessible.length).pdf;
  }

  /** Step 4a and its check, on the file as written (compaction and what follows it leave the tags as they are). */
  async function makeAccessible(pdf: Buffer, accountId: string): Promise<Buffer> {
    const made = await makePdfUaOffThread(pdf, accountId);
    if (made.report.compliant) return made.pdf;
    // What the template caused, by checkpoint (the page survey has named the elements it could).
    throw new ValidationError(
      made.report.findings.map((f) => ({
        loc: ['body', 'pdf_ua'],
        msg: `${f.message} PDF/UA forbids it (Matterhorn checkpoint ${f.checkpoint}).`,
        type: `value_error.pdf_ua.${f.checkpoint}`,
        // The HTML element it was printed from, for programs (the studio places the problem at its tag).
        ...(f.element ? { ctx: { element: f.element } } : {}),
      })),
    );
  }

  function protect(pdf: Buffer, protection: PdfProtection, accountId: string): Promise<Buffer> {
    if (!deps.qpdf) throw new Error('a document to protect without qpdf');
    return deps.qpdf.encrypt(pdf, protection, accountId);
  }

  async function finishFile(printed: SpooledFile, options: FinishOptions, task: CompactionTask): Promise<FinishedPdf> {
    const spool = deps.spool;
    if (!spool) throw new Error('a spooled PDF to finish without a spool');
    const titled = await withDocumentInfoInFile(printed, options.title, options.metadata ?? {}).catch(
      async (error: unknown) => {
        await spool.remove(printed.path);
        throw error;
      },
    );
    const outputPath = spool.newPath();
    const startedAt = performance.now();
    const result = observed(await pool.compactFile(titled, outputPath, task), startedAt, titled.size);
    return { file: result.file, temporaryPaths: [titled.path, outputPath] };
  }

  return {
    async finish(printed, options) {
      const task: CompactionTask = {
        timeoutMs: options.timeoutMs,
        ticket: { accountId: options.accountId, kind: options.kind === 'preview' ? 'free' : 'paid' },
      };
      if (Buffer.isBuffer(printed)) return { pdf: await finishBytes(printed, options, task) };
      // Chromium spools only what needs neither a stamp, PDF/A, a watermark, a signature nor protection (documents.ts asks it so).
      if (
        options.previewStamp ||
        options.pdfa ||
        options.watermark ||
        options.sign ||
        options.protect ||
        options.pdfUa
      ) {
        throw new Error('a spooled PDF cannot be stamped, watermarked, signed, protected or made PDF/A');
      }
      return finishFile(printed, options, task);
    },
    stats: () => pool.stats(),
    close: () => pool.close(),
  };
}
