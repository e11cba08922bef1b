/**
 * A PDF tool's inputs, each given as `pdf_base64` or `pdf_url` (exactly one), turned into checked
 * bytes before anything is charged: base64 decoded, URLs downloaded through the outbound guard
 * (net/fetch-public-file.ts: public addresses only unless PRESSROOM_ALLOW_PRIVATE_NETWORKS, every
 * redirect checked again, a time limit), all inputs of a request together within
 * PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES, then read by qpdf: a PDF, not encrypted, within the page bound.
 * Every refusal is a 422 whose `loc` names the input (`["body","pdfs",1,"pdf_url"]`); one whose reading
 * went past qpdf's memory or CPU ceiling is the coded 422 PDF_TOO_COMPLEX, its message naming the input.
 * A signed input is refused by a tool that would break its signatures, unless the request allows it
 * (signed-inputs.ts).
 */
import type { DocumentWarning } from '../shared/document-warnings.js';
import type { Dispatcher } from 'undici';
import { fetchPublicFile, PublicFetchError } from '../net/fetch-public-file.js';
import { AppError, isAppError, ValidationError } from '../shared/errors.js';
import type { Qpdf } from '../pdf/qpdf.js';
import { decodedLength, isBase64 } from '../shared/base64.js';
import { VERIFY_MAX_SIGNATURES } from '../signing/signing-bounds.js';
import { checkSignedInput, countByteRanges, type SignedInputPolicy } from './signed-inputs.js';

/** One input as the request gives it. */
export interface PdfSource {
  pdfUrl?: string | null;
  pdfBase64?: string | null;
}

/** A checked input: its bytes and page count. */
export interface PdfInput {
  pdf: Buffer;
  pages: number;
  /** Encrypted, and opened with the password given (unlock). */
  encrypted?: boolean;
  /** Signatures found (signed-inputs.ts), counted up to one past VERIFY_MAX_SIGNATURES. */
  signatures: number;
}

export interface PdfInputLimits {
  maxInputBytes: number;
  maxPages: number;
  fetchTimeoutMs: number;
  allowPrivateNetworks: boolean;
  /** The guarded dispatcher every download connects through. */
  dispatcher: Dispatcher;
}

/** Where a PDF must start (the specification lets readers look within the first 1024 bytes). */
const HEADER_WINDOW = 1024;

function refuse(loc: (string | number)[], msg: string, type: string): never {
  throw new ValidationError([{ loc: ['body', ...loc], msg, type }]);
}

const tooLarge = (limit: number) =>
  `the PDFs of one request may have ${limit} bytes in all (PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES); send smaller files`;

function decodeBase64(text: string, loc: (string | number)[], budget: number, limit: number): Buffer {
  // A data: URL's prefix is tolerated: clients copy it from browsers.
  const compact = text.replace(/^data:application\/pdf;base64,/i, '').replace(/\s+/g, '');
  if (!isBase64(compact)) refuse(loc, 'pdf_base64 is not valid base64', 'base64_invalid');
  if (decodedLength(compact) > budget) refuse(loc, tooLarge(limit), 'pdf_too_large');
  return Buffer.from(compact, 'base64');
}

/** The bytes of one source; `budget` is what is left of the request's byte limit. */
async function readSource(
  source: PdfSource,
  loc: (string | number)[],
  limits: PdfInputLimits,
  budget: number,
): Promise<Buffer> {
  const hasUrl = source.pdfUrl != null;
  const hasBase64 = source.pdfBase64 != null;
  if (hasUrl === hasBase64)
    refuse(
      loc,
      hasUrl ? 'Give either pdf_url or pdf_base64, not both' : 'Give the PDF as pdf_url (an https URL) or pdf_base64',
      hasUrl ? 'input_conflict' : 'missing',
    );
  if (hasBase64) return decodeBase64(source.pdfBase64!, [...loc, 'pdf_base64'], budget, limits.maxInputBytes);
  try {
    const file = await fetchPublicFile(source.pdfUrl!, {
      dispatcher: limits.dispatcher,
      allowPrivateNetworks: limits.allowPrivateNetworks,
      maxBytes: budget,
      timeoutMs: limits.fetchTimeoutMs,
      accept: 'application/pdf',
    });
    return file.body;
  } catch (error) {
    if (!(error instanceof PublicFetchError)) throw error;
    const overBudget = /larger than/.test(error.message);
    refuse(
      [...loc, 'pdf_url'],
      overBudget ? tooLarge(limits.maxInputBytes) : `pdf_url could not be downloaded: ${error.message}`,
      overBudget ? 'pdf_too_large' : 'url_fetch_failed',
    );
  }
}

/**
 * Checks that bytes are a PDF qpdf can read, not encrypted (or opened by `password`), within the page
 * bound; returns its page count.
 */
async function checkPdf(
  pdf: Buffer,
  loc: (string | number)[],
  qpdf: Qpdf,
  limits: { maxPages: number; accountId: string; password?: string },
): Promise<Omit<PdfInput, 'pdf'>> {
  const { maxPages, password } = limits;
  if (!pdf.subarray(0, HEADER_WINDOW).includes('%PDF-'))
    refuse(loc, 'The file is not a PDF (it does not start with %PDF-)', 'pdf_invalid');
  const inspection = await qpdf.inspect(pdf, limits.accountId, password).catch((error: unknown) => {
    // Past qpdf's ceiling (a file built to exhaust it, or one too big to read): say which input it was.
    if (isAppError(error, 'PDF_TOO_COMPLEX'))
      throw new AppError('PDF_TOO_COMPLEX', `${['body', ...loc].join('.')}: ${error.message}`, { cause: error });
    throw error;
  });
  if (inspection.kind === 'encrypted' && password !== undefined)
    refuse(['password'], 'The password does not open this PDF; give its user or owner password', 'password_invalid');
  if (inspection.kind === 'encrypted') {
    refuse(
      loc,
      'The PDF is encrypted (password-protected); remove the encryption first with POST /v1/pdf-tools/unlock and its password, then send it again',
      'pdf_encrypted',
    );
  }
  if (inspection.kind === 'unreadable')
    refuse(loc, `The file is not a readable PDF: ${inspection.reason}`, 'pdf_invalid');
  if (inspection.pages === 0) refuse(loc, 'The PDF has no pages', 'pdf_invalid');
  if (inspection.pages > maxPages)
    refuse(loc, `The PDF has ${inspection.pages} pages; the most an input may have is ${maxPages}`, 'too_many_pages');
  const signatures = Math.max(inspection.signedFields, countByteRanges(pdf, VERIFY_MAX_SIGNATURES + 1));
  return { pages: inspection.pages, encrypted: inspection.encrypted === true, signatures };
}

/** How a request's inputs are read: its account (qpdf runs are shared fairly between accounts), the engine, and what a signed input means to the tool. */
export interface InputReader {
  accountId: string;
  qpdf: Qpdf;
  /** For a tool that would break an input's signatures; without it (sign, verify) signed inputs are read as any other. */
  signed?: SignedInputPolicy;
  /** What the tool could not keep of its inputs (merge: the tags), told with the result. */
  warnings?: DocumentWarning[];
}

/**
 * Reads and checks the sources in order (`locs[i]` names source i in errors: `["pdfs", i]`, or `[]`
 * for the single input of extract and rotate); the first problem is the 422.
 */
export async function readPdfInputs(
  sources: PdfSource[],
  locs: (string | number)[][],
  limits: PdfInputLimits,
  reader: InputReader & { password?: string },
): Promise<PdfInput[]> {
  const inputs: PdfInput[] = [];
  let used = 0;
  for (const [i, source] of sources.entries()) {
    const loc = locs[i]!;
    const pdf = await readSource(source, loc, limits, limits.maxInputBytes - used);
    used += pdf.length;
    const where = source.pdfUrl != null ? [...loc, 'pdf_url'] : [...loc, 'pdf_base64'];
    const input: PdfInput = {
      pdf,
      ...(await checkPdf(pdf, where, reader.qpdf, {
        maxPages: limits.maxPages,
        accountId: reader.accountId,
        password: reader.password,
      })),
    };
    if (reader.signed) checkSignedInput(input.signatures, ['body', ...where], reader.signed);
    inputs.push(input);
  }
  return inputs;
}
