/**
 * A generation's finishing (`watermark`, `metadata`, `protect` on POST /v1/pdf/create and
 * /create-async; docs/finishing.md): checked before any charge (`checkFinishing`), turned into what
 * the after-print step draws (`finishingFor`, again when the document is produced: a job runs later),
 * and its passwords sealed while a job waits in its row (`sealFinishing`); `sign` checked before the
 * charge (`checkSignature`).
 */
import type { FinishOptions } from '../finishing/finishing.js';
import type { MetadataRequest, ProtectRequest, WatermarkRequest } from '../finishing/requested/finishing-requests.js';
import { openProtection, protectionOf, sealProtection, type SealedProtection } from '../finishing/requested/protect.js';
import { prepareWatermark, type AssetReader } from '../finishing/requested/watermark.js';
import type { TextLayout } from '../finishing/requested/text-layout.js';
import { ValidationError } from '../shared/errors.js';
import { isHybridFormat, type EInvoiceRequest } from '../einvoice/einvoice.js';
import type { PdfAVariant } from '../finishing/pdfa.js';
import type { SignatureOptions, Signing } from '../signing/sign.js';

/** The finishing fields of a generation, as the request gives them (protect sealed once a job stores it). */
export interface FinishingFields {
  watermark?: WatermarkRequest | null;
  metadata?: MetadataRequest | null;
  protect?: ProtectRequest | { sealed: SealedProtection } | null;
}

/** What of a generation's options (documents.ts GenerationOptions) its finishing depends on. */
export interface FinishingInput extends FinishingFields {
  pdfVariant?: PdfAVariant | null;
  /** An image is made instead of a PDF: nothing to sign. */
  image?: unknown;
  einvoice?: Pick<EInvoiceRequest, 'format'> | null;
  sign?: SignatureOptions | null;
}

/** What checking and drawing need: the account's assets, the key that seals a job's passwords. */
export interface FinishingContext {
  accountId: string;
  readAsset: AssetReader;
  /** Lays out watermark text in scripts that need shaping (Chromium); without it such text is a 422. */
  layOutText?: TextLayout;
  /** Absent: a sealed protect cannot be opened, nor one sealed (passwords are never kept in the clear). */
  sealKey?: Buffer;
}

function keyOf(sealKey: Buffer | undefined): Buffer {
  if (!sealKey) throw new Error('protect passwords to seal or open without a seal key');
  return sealKey;
}

/**
 * The finishing a document gets, checked: 422 for a watermark that cannot be drawn, and for
 * combinations the formats forbid (protect with sign or with PDF/A or an e-invoice, which is PDF/A-3b;
 * finishing on XRechnung XML, which is not a PDF).
 */
export async function finishingFor(
  options: FinishingInput,
  context: FinishingContext,
): Promise<Pick<FinishOptions, 'watermark' | 'metadata' | 'protect'>> {
  const asked = (['watermark', 'metadata', 'protect'] as const).filter((field) => options[field] != null);
  if (asked.length === 0) return {};
  if (options.einvoice && !isHybridFormat(options.einvoice.format)) {
    throw new ValidationError(
      asked.map((field) => ({
        loc: ['body', field],
        msg: `${field} applies to PDFs; einvoice.format ${options.einvoice!.format} makes XML only`,
        type: 'value_error',
      })),
    );
  }
  const pdfa = options.pdfVariant ?? (options.einvoice ? 'pdf/a-3b' : null);
  if (options.protect && options.sign) {
    // qpdf's encryption rewrites every byte, which would break the signature made before it.
    throw new ValidationError([
      {
        loc: ['body', 'protect'],
        msg: 'protect cannot be combined with sign: the encryption would break the signature. Leave one out, or protect the signed PDF with a viewer that keeps signatures',
        type: 'value_error',
      },
    ]);
  }
  if (options.protect && pdfa) {
    throw new ValidationError([
      {
        loc: ['body', 'protect'],
        msg: `protect cannot be combined with ${options.pdfVariant ? `pdf_variant ${pdfa}` : 'an e-invoice (PDF/A-3b)'}: PDF/A forbids encryption. Leave one out`,
        type: 'value_error',
      },
    ]);
  }
  if (pdfa === 'pdf/a-1b' && options.watermark && (options.watermark.opacity ?? 0.3) < 1) {
    throw new ValidationError([
      {
        loc: ['body', 'watermark', 'opacity'],
        msg: 'PDF/A-1b forbids transparency: give the watermark opacity 1, or use pdf_variant pdf/a-2b',
        type: 'value_error',
      },
    ]);
  }
  const protect =
    options.protect == null
      ? null
      : 'sealed' in options.protect
        ? openProtection(options.protect.sealed, keyOf(context.sealKey))
        : protectionOf(options.protect, ['body', 'protect']);
  const watermark = options.watermark
    ? await prepareWatermark(options.watermark, {
        accountId: context.accountId,
        readAsset: context.readAsset,
        layOutText: context.layOutText,
        loc: ['body', 'watermark'],
      })
    : null;
  if (watermark?.mark.kind === 'pdf' && pdfa) {
    // A PDF asset brings its own fonts, colours and transparency, which the PDF/A rules may not allow.
    throw new ValidationError([
      {
        loc: ['body', 'watermark', 'asset'],
        msg: `a PDF asset cannot mark a PDF/A document (${options.pdfVariant ? `pdf_variant ${pdfa}` : 'an e-invoice'}): its content is not checked against PDF/A. Use a PNG or JPEG asset, or text`,
        type: 'value_error',
      },
    ]);
  }
  const m = options.metadata;
  return {
    watermark,
    protect,
    metadata: m
      ? { title: m.title, author: m.author, subject: m.subject, keywords: m.keywords, creator: m.creator }
      : null,
  };
}

/** The options as a job row keeps them: protect's passwords sealed. */
export function sealFinishing<T extends FinishingInput>(options: T, sealKey: Buffer | undefined): T {
  if (!options.protect || 'sealed' in options.protect) return options;
  return {
    ...options,
    protect: { sealed: sealProtection(protectionOf(options.protect, ['body', 'protect']), keyOf(sealKey)) },
  };
}

/** A `sign` checked before the charge: something to sign, the certificate, the TSA. */
export async function checkSignature(
  options: FinishingInput,
  context: { accountId: string; signing?: Signing },
): Promise<void> {
  const loc = ['body', 'sign'];
  const refuse = (msg: string): never => {
    throw new ValidationError([{ loc, msg, type: 'sign_not_applicable' }]);
  };
  if (options.image) refuse('Images cannot be signed; sign is for PDFs');
  if (options.einvoice && !isHybridFormat(options.einvoice.format))
    refuse(`${options.einvoice.format} is XML without a PDF; sign is for PDFs`);
  // The mark is drawn in a standard font that is not embedded, which PDF/A forbids.
  if (options.sign!.visible && (options.pdfVariant || options.einvoice))
    refuse(
      'A visible signature cannot be added to a PDF/A document yet; leave out visible (the signature itself is kept)',
    );
  if (!context.signing) return refuse('Signing is not set up in this process');
  await context.signing.prepare(options.sign!, { accountId: context.accountId, kind: 'paid', loc });
}

/** Whether a document is PDF/UA: the request's `pdf_ua`, else its template's `page.pdf_ua`. */
export function wantsPdfUa(
  options: { pdfUa?: boolean | null },
  template: { page?: { pdf_ua?: boolean } | null },
): boolean {
  return options.pdfUa ?? template.page?.pdf_ua ?? false;
}

/**
 * What PDF/UA cannot be combined with, refused before the charge: an untagged print, PDF/A-1b (its
 * converter rewrites the file without the structure tree), an XML-only e-invoice (no PDF) and a
 * visible signature (its mark is drawn as page content outside the tags; docs/accessibility.md).
 */
export function checkPdfUaCombination(options: {
  tagged?: boolean | null;
  pdfVariant?: PdfAVariant | null;
  einvoice?: EInvoiceRequest | null;
  sign?: SignatureOptions | null;
}): void {
  const refuse = (field: string, msg: string) => {
    throw new ValidationError([{ loc: ['body', field], msg, type: 'value_error.pdf_ua' }]);
  };
  if (options.tagged === false)
    refuse('tagged', 'A PDF/UA document is always tagged: leave tagged out, or set it to true.');
  if (options.pdfVariant === 'pdf/a-1b')
    refuse(
      'pdf_variant',
      'PDF/UA combines with pdf/a-2b or pdf/a-3b, not pdf/a-1b (its conversion drops the tags); choose one of those.',
    );
  if (options.einvoice && !isHybridFormat(options.einvoice.format))
    refuse('pdf_ua', 'This e-invoice is XML only, with no PDF to make accessible; leave pdf_ua out.');
  if (options.sign?.visible)
    refuse(
      'sign',
      'A visible signature cannot be added to a PDF/UA document yet (its mark would be untagged); sign it invisibly, or leave pdf_ua out.',
    );
}
