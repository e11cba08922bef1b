/**
 * Reading a PDF as Chromium writes it without parsing all of it: one classic xref table at the
 * offset the last `startxref` names, and objects looked up through it. Shared by the Info update
 * (`document-info.ts`) and the page count (`pdf-page-count.ts`); a file of another shape makes
 * these return undefined and the caller falls back to pdf-lib.
 */
import { PDFContext, PDFObjectParser } from '@cantoo/pdf-lib';

/** The offset after the file's last `startxref`. */
export function lastStartXref(pdf: Buffer): number | undefined {
  const tail = pdf.toString('latin1', Math.max(0, pdf.length - 1024));
  const match = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail);
  const offset = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(offset) && offset < pdf.length ? offset : undefined;
}

/**
 * Where object `objectNumber` starts, by the classic xref section at `xrefAt` (up to its `trailer`):
 * subsection headers "first count", each followed by `count` entries of exactly 20 bytes, "offset
 * generation n|f" (ISO 32000-1, 7.5.4). Reads only the header lines and the one entry, so a long
 * document costs no more than a short one.
 */
export function offsetInXref(pdf: Buffer, xrefAt: number, trailerAt: number, objectNumber: number): number | undefined {
  let at = xrefAt + 'xref'.length;
  while (at < trailerAt) {
    const header = /^\s*(\d+)\s+(\d+)[ \t]*(?:\r\n|\r|\n)/.exec(pdf.toString('latin1', at, Math.min(at + 64, trailerAt)));
    if (!header) return undefined;
    const [first, count, entriesAt] = [Number(header[1]), Number(header[2]), at + header[0].length];
    if (objectNumber >= first && objectNumber < first + count) {
      const entryAt = entriesAt + (objectNumber - first) * 20;
      const entry = /^(\d{10}) \d{5} ([nf])/.exec(pdf.toString('latin1', entryAt, entryAt + 20));
      return entry?.[2] === 'n' ? Number(entry[1]) : undefined;
    }
    at = entriesAt + count * 20;
  }
  return undefined;
}

/** The PDF object that starts at `at`, or undefined when it does not parse. */
export function parseAt(pdf: Buffer, at: number, context: PDFContext) {
  try {
    return PDFObjectParser.forBytes(pdf.subarray(at), context).parseObject();
  } catch {
    return undefined;
  }
}
