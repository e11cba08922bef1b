/**
 * Signed inputs (issue 49). A signature covers the file's bytes as they were signed, so a tool that
 * rewrites a PDF (protect, watermark, metadata, rotate, flatten, unlock) leaves its signatures invalid
 * ("Digest Mismatch", or not covering the document any more), and one that makes a new document from
 * its pages (merge, extract-pages, split) gives a document no signature covers: qpdf drops a
 * signature without a widget on a page and carries one with a widget over, no longer valid. Such a tool
 * refuses a signed input (422 `pdf_signed`, before any charge) unless the request says
 * `allow_breaking_signatures: true`; then it proceeds and the answer carries a SIGNATURES_INVALIDATED
 * warning. Sign adds its signature as an incremental update and keeps those before it; verify reads.
 *
 * A signature is counted where it must be visible: its dictionary's /ByteRange, in the file's own
 * bytes (a signature in a compressed object stream could not say which bytes it covers), and qpdf's
 * count of signed fields with a widget on a page (inspect), which sees fields sharing one signature.
 */
import type { DocumentWarning } from '../shared/document-warnings.js';
import { ValidationError } from '../shared/errors.js';

/** What a tool does to a signed input, and whether the request accepts breaking its signatures. */
export interface SignedInputPolicy {
  /** The tool's work on the input, in words: "protecting it", "merging it". */
  readonly doing: string;
  /** A new document (merge, extract, split): its signatures do not carry over; otherwise they are invalidated. */
  readonly newDocument: boolean;
  /** `allow_breaking_signatures: true` */
  readonly allowBreaking: boolean;
  /** The answer's warnings, added to for each signed input accepted. */
  readonly warnings: DocumentWarning[];
}

const BYTE_RANGE = Buffer.from('/ByteRange');

/** Signature dictionaries in the file's bytes, counted up to `limit` (each a native search, so a file full of them stays cheap). */
export function countByteRanges(pdf: Buffer, limit: number): number {
  let count = 0;
  for (let at = pdf.indexOf(BYTE_RANGE); at >= 0 && count < limit; at = pdf.indexOf(BYTE_RANGE, at + BYTE_RANGE.length))
    count += 1;
  return count;
}

/** Refuses a signed input (422 at `loc`) unless the policy allows it, then warns. */
export function checkSignedInput(signatures: number, loc: (string | number)[], policy: SignedInputPolicy): void {
  if (signatures === 0) return;
  const them = signatures === 1 ? 'its signature' : `its ${signatures} signatures`;
  const effect = policy.newDocument
    ? `makes a new document that ${them} do${signatures === 1 ? 'es' : ''} not cover`
    : `would invalidate ${them}, which cover${signatures === 1 ? 's' : ''} the file as it was signed`;
  if (!policy.allowBreaking) {
    throw new ValidationError([
      {
        loc,
        msg: `The PDF is signed; ${policy.doing} ${effect}. Nothing was charged. To do it anyway, send allow_breaking_signatures: true`,
        type: 'pdf_signed',
      },
    ]);
  }
  const done = policy.newDocument
    ? `the result is not signed: ${them} did not carry over, and any left in it no longer verify`
    : `${them} no longer verif${signatures === 1 ? 'ies' : 'y'}`;
  policy.warnings.push({
    code: 'SIGNATURES_INVALIDATED',
    message: `${loc.join('.')} was signed; after ${policy.doing}, ${done} (allow_breaking_signatures: true).`,
  });
}
