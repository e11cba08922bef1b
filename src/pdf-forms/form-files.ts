/**
 * A form template's PDF (issue 54; docs/pdf-forms.md): checked when it is uploaded, stored per account
 * in the blob store as the asset library stores its files, and read back for each fill.
 *
 * The check, in order, before anything is stored: base64 within FORM_PDF_MAX_BYTES (and the PDF tools'
 * byte bound); a PDF qpdf reads under its ceilings, not encrypted, with pages within the PDF tools' page
 * bound; written by qpdf without object streams (@libpdf/core inflates them without a bound), still
 * within the byte bound; then its form read on a form thread (form-reading.ts): an AcroForm with at
 * least one field to fill. Every refusal is a 422 at `["body","pdf_base64"]` (at `["body","pdf"]` for a multipart
 * upload's file part) saying why and what to do.
 *
 * What is stored is the unpacked PDF, under `forms/<account>/<random>.pdf`: a fresh key per upload,
 * never rewritten, so a published version (which keeps its key) fills the very PDF it was published
 * with. A key goes once no draft or version names it (`release`).
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/database.js';
import { ByteBudgetCache } from '../assets/byte-budget-cache.js';
import type { BlobStore, StoredBlob } from '../storage/blob-store.js';
import type { Qpdf } from '../pdf/qpdf.js';
import { decodedLength, isBase64 } from '../shared/base64.js';
import { AppError, isAppError, ValidationError } from '../shared/errors.js';
import { randomId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import type { FormTemplateFile } from './form-fields.js';
import type { FormReading } from './form-reading.js';
import { readFormOffThread } from './form-thread.js';

/**
 * The largest form PDF: what fits in base64 within a template request's fixed body limit (4 MiB,
 * http/body-limits.ts TEMPLATE_BODY_LIMIT_BYTES) with room for the rest of the JSON.
 */
export const FORM_PDF_MAX_BYTES = 3_000_000;

/** Form PDFs kept in memory per process for filling: the busy forms' bytes. */
const FORM_CACHE_BYTES = 64 * 1024 * 1024;

/** Where a refusal points: the JSON body's base64, or a multipart upload's file part. */
const BASE64_LOC = ['body', 'pdf_base64'];
export const UPLOAD_LOC = ['body', 'pdf'];

function refuseAt(loc: string[], msg: string, type: string): never {
  throw new ValidationError([{ loc, msg, type }]);
}

const WHY: Record<Extract<FormReading, { kind: 'refused' }>['reason'], string> = {
  encrypted:
    'The PDF is encrypted; remove the encryption first (POST /v1/pdf-tools/unlock with its password), then send it again',
  no_form:
    'The PDF has no fillable form (no AcroForm); add form fields to it in a PDF editor, or make an HTML template instead',
  xfa_only:
    'The form is an XFA form with no AcroForm fields, which only an XFA viewer can fill; save it as a static (AcroForm) PDF form in Acrobat or LiveCycle Designer, then send it again',
  signature_only:
    'The form has signature fields only and nothing to fill; sign documents with `sign` on POST /v1/pdf/create, or add fields to fill',
  no_fields:
    'The form has no field to fill (only push buttons, or every field read-only); add text fields, checkboxes or choices, then send it again',
  too_many_fields: 'The form has more than 500 fields, the most a form template may have; split the form',
};

async function bytesOf(body: StoredBlob['body']): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export interface FormFilesDeps {
  db: Db;
  blobs: BlobStore;
  qpdf: Qpdf;
  /** The PDF tools' bounds (config `pdfTools`). */
  maxInputBytes: number;
  maxPages: number;
  logger: Logger;
}

export interface FormFiles {
  /**
   * Checks an uploaded form and stores it; a 422 for one refused, nothing stored: at ["body","pdf_base64"]
   * for base64 text, at ["body","pdf"] for the bytes of a multipart upload's file part.
   */
  accept(accountId: string, pdf: string | Buffer): Promise<FormTemplateFile>;
  /** The stored PDF of a form template (draft or version). */
  read(file: Pick<FormTemplateFile, 'storageKey'>): Promise<Buffer>;
  /** A filled form's fields and annotations drawn into its pages, the form gone (qpdf, paid work). */
  flatten(pdf: Buffer, accountId: string): Promise<Buffer>;
  /** Deletes each stored PDF no draft or version names any more; never throws. */
  release(keys: readonly (string | null | undefined)[]): Promise<void>;
}

export function createFormFiles(deps: FormFilesDeps): FormFiles {
  const { db, blobs, qpdf, logger } = deps;
  const maxBytes = Math.min(FORM_PDF_MAX_BYTES, deps.maxInputBytes);
  const cache = new ByteBudgetCache<Buffer>(FORM_CACHE_BYTES);

  const tooLarge: (loc: string[]) => never = (loc) =>
    refuseAt(loc, `A form PDF may have at most ${maxBytes} bytes; send a smaller file`, 'pdf_too_large');

  function decode(text: string): Buffer {
    const refuse: (msg: string, type: string) => never = (msg, type) => refuseAt(BASE64_LOC, msg, type);
    const compact = text.replace(/^data:application\/pdf;base64,/i, '').replace(/\s+/g, '');
    if (!isBase64(compact)) refuse('pdf_base64 is not valid base64', 'base64_invalid');
    if (decodedLength(compact) > maxBytes + 2) tooLarge(BASE64_LOC);
    const pdf = Buffer.from(compact, 'base64');
    if (pdf.length > maxBytes) tooLarge(BASE64_LOC);
    return pdf;
  }

  /** qpdf's reading (bounded): a PDF within the page bound, not encrypted; its bytes without object streams. */
  async function unpacked(accountId: string, pdf: Buffer, loc: string[]): Promise<{ pdf: Buffer; pages: number }> {
    const refuse: (msg: string, type: string) => never = (msg, type) => refuseAt(loc, msg, type);
    if (!pdf.subarray(0, 1024).includes('%PDF-'))
      refuse('The file is not a PDF (it does not start with %PDF-)', 'pdf_invalid');
    const named = (error: unknown): never => {
      if (isAppError(error, 'PDF_TOO_COMPLEX'))
        throw new AppError('PDF_TOO_COMPLEX', `${loc.join('.')}: ${error.message}`, { cause: error });
      throw error;
    };
    const inspection = await qpdf.inspect(pdf, accountId).catch(named);
    if (inspection.kind === 'encrypted') refuse(WHY.encrypted, 'pdf_encrypted');
    if (inspection.kind === 'unreadable') refuse(`The file is not a readable PDF: ${inspection.reason}`, 'pdf_invalid');
    if (inspection.pages === 0) refuse('The PDF has no pages', 'pdf_invalid');
    if (inspection.pages > deps.maxPages)
      refuse(`The PDF has ${inspection.pages} pages; a form may have at most ${deps.maxPages}`, 'too_many_pages');
    if (inspection.signedFields > 0)
      refuse(
        'The PDF is signed; filling it would break its signatures. Send the form before it was signed',
        'pdf_signed',
      );
    const out = await qpdf.withoutObjectStreams(pdf, accountId, 'free').catch(named);
    if (out.length > deps.maxInputBytes)
      refuse(
        `Unpacked, the PDF has ${out.length} bytes, more than the ${deps.maxInputBytes} a PDF may have here; send a smaller form`,
        'pdf_too_large',
      );
    return { pdf: out, pages: inspection.pages };
  }

  return {
    async accept(accountId, upload) {
      const loc = typeof upload === 'string' ? BASE64_LOC : UPLOAD_LOC;
      if (typeof upload !== 'string' && upload.length > maxBytes) tooLarge(loc);
      const { pdf, pages } = await unpacked(accountId, typeof upload === 'string' ? decode(upload) : upload, loc);
      const refuse: (msg: string, type: string) => never = (msg, type) => refuseAt(loc, msg, type);
      const reading = await readFormOffThread(pdf, accountId).catch((error: unknown) => {
        if (isAppError(error, 'PDF_TOOL_FAILED')) return undefined;
        throw error;
      });
      if (!reading)
        refuse(
          'The PDF could not be read as a form; rewrite it with another PDF tool first, then send it again',
          'pdf_invalid',
        );
      if (reading.kind === 'refused') refuse(WHY[reading.reason], `pdf_form.${reading.reason}`);
      const storageKey = `forms/${accountId}/${randomId(24)}.pdf`;
      await blobs.put(storageKey, pdf, { contentType: 'application/pdf' });
      cache.set(storageKey, pdf, pdf.length);
      return {
        storageKey,
        pages,
        bytes: pdf.length,
        sha256: createHash('sha256').update(pdf).digest('hex'),
        fields: reading.fields,
      };
    },

    async read({ storageKey }) {
      const cached = cache.get(storageKey);
      if (cached) return cached;
      const blob = await blobs.get(storageKey);
      if (!blob)
        throw new AppError('RENDER_FAILED', 'The form of this template is missing from storage; nothing was charged.');
      const pdf = await bytesOf(blob.body);
      cache.set(storageKey, pdf, pdf.length);
      return pdf;
    },

    flatten: (pdf, accountId) => qpdf.flatten(pdf, accountId),

    async release(keys) {
      for (const key of new Set(keys.filter((k): k is string => typeof k === 'string'))) {
        try {
          const draft = await db.selectFrom('templates').select('id').where('form_key', '=', key).executeTakeFirst();
          const version = draft
            ? draft
            : await db
                .selectFrom('template_versions')
                .select('template_id')
                .where('form_key', '=', key)
                .executeTakeFirst();
          if (draft || version) continue;
          cache.delete(key);
          await blobs.delete(key);
        } catch (error) {
          logger.warn({ err: error, key }, 'could not delete a form PDF no template uses; it stays in storage');
        }
      }
    },
  };
}
