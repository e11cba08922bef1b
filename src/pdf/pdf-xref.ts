/**
 * Reading a PDF as Chromium writes it without parsing all of it: one classic xref table at the
 * offset the last `startxref` names, and objects looked up through it. Shared by the Info update
 * (`document-info.ts`), the page count (`pdf-page-count.ts`) and compaction; a file of another shape
 * makes these return undefined and the caller falls back to pdf-lib.
 *
 * The bytes come through `PdfBytes`: a buffer, or a spooled file read at offsets (`pdf-file.ts`), so
 * a long PDF on disk is read only where it is looked at — its last kilobyte, its xref section, and a
 * window at each object looked up.
 */
import { readSync } from 'node:fs';
import { PDFContext, PDFDict, PDFObjectParser, type PDFRef } from '@cantoo/pdf-lib';

/** Random access to a PDF's bytes. */
export interface PdfBytes {
  readonly length: number;
  /** Bytes `[start, end)`, cut at the end of the file. */
  slice(start: number, end: number): Buffer;
}

/** A buffer as PdfBytes: slices are views, nothing is copied. */
export function bufferBytes(pdf: Buffer): PdfBytes {
  return { length: pdf.length, slice: (start, end) => pdf.subarray(start, end) };
}

/**
 * An open file of `size` bytes as PdfBytes: each slice is read from the file. With `readAheadBytes`,
 * a slice that is not within the last read is read with that much after it into one buffer kept for
 * the purpose, and the slices that fall within it are views of that buffer: a reader that walks the
 * file forwards (compaction) makes one read per window instead of one per object, and holds one
 * window. Such a view is valid only until the next slice; a caller copies what it keeps.
 */
export function fileBytes(fd: number, size: number, readAheadBytes = 0): PdfBytes {
  const read = (into: Buffer, start: number, length: number): Buffer => {
    let done = 0;
    while (done < length) {
      const n = readSync(fd, into, done, length - done, start + done);
      if (n === 0) break;
      done += n;
    }
    return into.subarray(0, done);
  };
  const buffer = Buffer.allocUnsafe(readAheadBytes);
  let window: Buffer = buffer.subarray(0, 0);
  let windowAt = 0;
  return {
    length: size,
    slice(start, end) {
      const last = Math.min(end, size);
      const length = Math.max(0, last - start);
      if (start >= windowAt && last <= windowAt + window.length)
        return window.subarray(start - windowAt, last - windowAt);
      if (length >= readAheadBytes) return read(Buffer.allocUnsafe(length), start, length);
      window = read(buffer, start, Math.min(readAheadBytes, size - start));
      windowAt = start;
      return window.subarray(0, length);
    },
  };
}

/** How much of the file is read at an object: more than Chromium's largest (a page tree's /Kids of 2,000 pages is ~20 KB). */
const OBJECT_WINDOW_BYTES = 256 * 1024;

/** The offset after the file's last `startxref`. */
export function lastStartXref(pdf: PdfBytes): number | undefined {
  const tail = pdf.slice(Math.max(0, pdf.length - 1024), pdf.length).toString('latin1');
  const match = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail);
  const offset = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(offset) && offset < pdf.length ? offset : undefined;
}

/** An object found through the xref table: where it starts in the file, and the file from there. */
export interface LocatedObject {
  /** Offset of its `n g obj` line in the file. */
  readonly at: number;
  /** The file from `at`, at least OBJECT_WINDOW_BYTES of it (or to the end). */
  readonly window: Buffer;
  /** Offset in `window` just past the `n g obj` line: where the object's value starts. */
  readonly valueAt: number;
}

/** The last classic xref section of a file: its offset, its trailer, and objects looked up through it. */
export interface XrefView {
  readonly xrefAt: number;
  readonly trailer: PDFDict;
  /** The object `ref` names, when the table lists it in use and its header matches; else undefined. */
  object(ref: PDFRef): LocatedObject | undefined;
}

/** The last xref section as a classic table with its trailer, or undefined for a file of another shape. */
export function readXref(pdf: PdfBytes, context: PDFContext): XrefView | undefined {
  const xrefAt = lastStartXref(pdf);
  if (xrefAt === undefined) return undefined;
  // The table, its trailer and the startxref line: the end of the file, 20 bytes per object.
  const section = pdf.slice(xrefAt, pdf.length);
  if (section.toString('latin1', 0, 4) !== 'xref') return undefined;
  const trailerAt = section.indexOf('trailer', 0, 'latin1');
  const trailer = trailerAt < 0 ? undefined : parseAt(section, trailerAt + 'trailer'.length, context);
  if (!(trailer instanceof PDFDict)) return undefined;
  return {
    xrefAt,
    trailer,
    object(ref) {
      const at = offsetInXref(section, 0, trailerAt, ref.objectNumber);
      if (at === undefined) return undefined;
      const window = pdf.slice(at, at + OBJECT_WINDOW_BYTES);
      const header = /^(\d+)\s+(\d+)\s+obj\s*/.exec(window.toString('latin1', 0, 40));
      if (!header || Number(header[1]) !== ref.objectNumber || Number(header[2]) !== ref.generationNumber)
        return undefined;
      return { at, window, valueAt: header[0].length };
    },
  };
}

/**
 * Where object `objectNumber` starts, by the classic xref section at `xrefAt` (up to its `trailer`):
 * subsection headers "first count", each followed by `count` entries of exactly 20 bytes, "offset
 * generation n|f" (ISO 32000-1, 7.5.4). Reads only the header lines and the one entry, so a long
 * document costs no more than a short one.
 */
function offsetInXref(pdf: Buffer, xrefAt: number, trailerAt: number, objectNumber: number): number | undefined {
  let at = xrefAt + 'xref'.length;
  while (at < trailerAt) {
    const header = /^\s*(\d+)\s+(\d+)[ \t]*(?:\r\n|\r|\n)/.exec(
      pdf.toString('latin1', at, Math.min(at + 64, trailerAt)),
    );
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
