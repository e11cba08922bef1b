/**
 * The finishing tools: the after-print steps of a generated document (docs/finishing.md), offered for
 * a PDF made elsewhere — flatten, watermark, metadata, protect — and unlock, which takes a password
 * off. Each checks its request and its input in `prepare…` (free, before the credit); the work is
 * qpdf's (flatten, protect, unlock: off the event loop, under its ceilings) or, for a watermark and
 * metadata, the same code the after-print step runs.
 */
import { withDocumentInfo } from '../finishing/document-info.js';
import type { MetadataRequest, ProtectRequest, WatermarkRequest } from '../finishing/requested/finishing-requests.js';
import { protectionOf } from '../finishing/requested/protect.js';
import type { TextLayout } from '../finishing/requested/text-layout.js';
import {
  prepareWatermark,
  targetPages,
  type AssetReader,
  type PreparedWatermark,
} from '../finishing/requested/watermark.js';
import { drawWatermarkOffThread } from '../finishing/requested/watermark-thread.js';
import type { PdfProtection } from '../pdf/qpdf.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { readPdfInputs, type InputReader, type PdfInputLimits, type PdfSource } from './pdf-inputs.js';

async function readOne(source: PdfSource, limits: PdfInputLimits, reader: InputReader & { password?: string }) {
  const [input] = await readPdfInputs([source], [[]], limits, reader);
  return input!;
}

/** Flatten: the input, checked. */
export async function prepareFlatten(source: PdfSource, limits: PdfInputLimits, reader: InputReader): Promise<Buffer> {
  return (await readOne(source, limits, reader)).pdf;
}

/** Watermark: the mark checked and loaded (asset, font) before the input is downloaded. */
export async function prepareWatermarkTool(
  source: PdfSource,
  request: WatermarkRequest,
  context: { limits: PdfInputLimits; reader: InputReader; readAsset: AssetReader; layOutText?: TextLayout },
): Promise<{ pdf: Buffer; pages: number; watermark: PreparedWatermark }> {
  const watermark = await prepareWatermark(request, {
    accountId: context.reader.accountId,
    readAsset: context.readAsset,
    layOutText: context.layOutText,
    loc: ['body', 'watermark'],
  });
  const input = await readOne(source, context.limits, context.reader);
  // Pages named past the end are a 422 now, not a surprise after the charge.
  targetPages(watermark.pages, input.pages, { strict: true, loc: ['body', 'watermark'] });
  return { pdf: input.pdf, pages: input.pages, watermark };
}

/** The watermarked PDF; a page past the end was refused in prepare. */
export function watermarkPdf(prepared: { pdf: Buffer; watermark: PreparedWatermark }): Promise<Buffer> {
  return drawWatermarkOffThread(prepared.pdf, prepared.watermark, { strictPages: true, loc: ['body', 'watermark'] });
}

/** Metadata: at least one entry, then the input. */
export async function prepareMetadata(
  source: PdfSource,
  request: MetadataRequest,
  limits: PdfInputLimits,
  reader: InputReader,
): Promise<Buffer> {
  if (Object.values(request).every((value) => value === undefined)) {
    throw new ValidationError([
      {
        loc: ['body', 'metadata'],
        msg: 'Give at least one of title, author, subject, keywords, creator',
        type: 'missing',
      },
    ]);
  }
  return (await readOne(source, limits, reader)).pdf;
}

/** The PDF with the entries in its Info dictionary; its own Creator stays unless one is given. */
export function writeMetadata(pdf: Buffer, request: MetadataRequest): Promise<Buffer> {
  return withDocumentInfo(pdf, '', { ...request, keepCreator: true });
}

/** Protect: the passwords and permissions (422 when owner and user are the same), then the input. */
export async function prepareProtect(
  source: PdfSource,
  request: ProtectRequest,
  limits: PdfInputLimits,
  reader: InputReader,
): Promise<{ pdf: Buffer; protection: PdfProtection }> {
  const protection = protectionOf(request, ['body', 'protect']);
  return { pdf: (await readOne(source, limits, reader)).pdf, protection };
}

/** Unlock: an encrypted input that `password` opens (422 otherwise, naming the password or the input). */
export async function prepareUnlock(
  source: PdfSource,
  password: string,
  limits: PdfInputLimits,
  reader: InputReader,
): Promise<Buffer> {
  const input = await readOne(source, limits, { ...reader, password });
  if (!input.encrypted)
    throw new ValidationError([
      {
        loc: ['body', source.pdfUrl != null ? 'pdf_url' : 'pdf_base64'],
        msg: 'The PDF is not encrypted; there is nothing to unlock',
        type: 'pdf_not_encrypted',
      },
    ]);
  return input.pdf;
}

/** The PDF without its encryption. */
export async function unlockPdf(pdf: Buffer, password: string, { qpdf, accountId }: InputReader): Promise<Buffer> {
  const unlocked = await qpdf.decrypt(pdf, password, accountId);
  // The password opened it in prepare; failing now is ours, and refunded.
  if (!unlocked) throw new AppError('PDF_TOOL_FAILED', 'The PDF could not be decrypted; nothing was charged.');
  return unlocked;
}
