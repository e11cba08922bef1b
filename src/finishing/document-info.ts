/**
 * The Info dictionary every PDF leaves with: Title = the document's own `<title>`, else the template's
 * name; Creator and Producer = `Pressroom <version>`. Chromium would say otherwise: an untitled page
 * gets its URL's host as Title (`render.pressroom.invalid`, our closed room's fake origin) and its user
 * agent and Skia's version as Creator and Producer (`HeadlessChrome/156…`, `Skia/PDF m156`).
 *
 * Chromium writes one classic xref table with Info as an object of its own, so the new Info goes in as
 * an incremental update: the same object number redefined, one xref entry and a trailer pointing back
 * to Chromium's (ISO 32000-1, 7.5.6). Only the trailer, one xref entry and the old Info are read, so
 * the cost hardly grows with the document, where a pdf-lib load and save grows with its objects
 * (figures: docs/performance-log/2026-11-23-to-28-pdf-libraries.md). The superseded dictionary is blanked in
 * place, at the same length so that no offset moves, so the browser's version is gone from the bytes
 * too. A file of another shape (an xref stream, an Info in an older section) is rewritten whole with
 * pdf-lib instead. A long PDF spilled to a file gets the same update in the file itself
 * (`withDocumentInfoInFile`): read at its end and its Info object, written at two offsets.
 */
import { open, readFile } from 'node:fs/promises';
import { PDFContext, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRef, PDFString } from '@cantoo/pdf-lib';
import { VERSION } from '../version.js';
import { spillWriteError, writeAll } from '../browser/pages/spill-file.js';
import type { PdfFile } from '../pdf/pdf-file.js';
import { prepareRewrite } from '../pdf/pdf-rewrite.js';
import { bufferBytes, fileBytes, parseAt, readXref, type PdfBytes } from '../pdf/pdf-xref.js';
import { RENDER_ORIGIN } from '../browser/pages/closed-room.js';

/** What Pressroom names itself as in Creator and Producer. */
export const PDF_PRODUCER = `Pressroom ${VERSION}`;

/** Titles Chromium makes up for a page without a `<title>` of its own: its URL, or the URL's host. */
const MADE_UP_TITLES = new Set([RENDER_ORIGIN, `${RENDER_ORIGIN}/`, new URL(RENDER_ORIGIN).host]);

/** The Title a document gets: its own (Chromium's Info Title), unless Chromium made it up; else `fallback`. */
export function documentTitle(chromiumTitle: string | undefined, fallback: string): string {
  const own = chromiumTitle?.trim();
  return own && !MADE_UP_TITLES.has(own) ? own : fallback;
}

/**
 * What a request's `metadata` (requested/finishing-requests.ts) puts in Info over Pressroom's defaults, and
 * whether the file's own Creator stays (a PDF tool's input was made elsewhere).
 */
export interface InfoEntries {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string[];
  creator?: string;
  keepCreator?: boolean;
}

/**
 * Returns the PDF with Pressroom's Title, Creator and Producer in its Info dictionary (other entries,
 * such as Chromium's CreationDate, are kept). `fallbackTitle` is used when the document has no title
 * (an empty one: none is written); `entries` (a request's `metadata`) go over both.
 */
export async function withDocumentInfo(pdf: Buffer, fallbackTitle: string, entries: InfoEntries = {}): Promise<Buffer> {
  return appendInfoUpdate(pdf, fallbackTitle, entries) ?? rewriteInfo(pdf, fallbackTitle, entries);
}

/**
 * The Title in the PDF's Info dictionary; undefined when there is none. Ghostscript's PDF/A-1 pass drops
 * a UTF-16 Title, so pdfa.ts reads it here first.
 */
export async function readInfoTitle(pdf: Buffer): Promise<string | undefined> {
  const located = locateInfo(bufferBytes(pdf));
  if (located) return titleOf(located.info);
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  return titleOf(doc.context.lookupMaybe(doc.context.trailerInfo.Info, PDFDict));
}

function titleOf(info: PDFDict | undefined): string | undefined {
  const title = info?.lookup(PDFName.of('Title'));
  return title instanceof PDFString || title instanceof PDFHexString ? title.decodeText() : undefined;
}

/** Info entries as Pressroom writes them over `old`. */
function pressroomInfo(
  old: PDFDict | undefined,
  fallbackTitle: string,
  context: PDFContext,
  entries: InfoEntries,
): PDFDict {
  const info = context.obj({});
  const text = (key: string, value: string | undefined) =>
    value !== undefined && info.set(PDFName.of(key), PDFHexString.fromText(value));
  for (const [key, value] of old?.entries() ?? []) info.set(key, value);
  const title = entries.title ?? documentTitle(titleOf(old), fallbackTitle);
  if (title !== '') text('Title', title);
  if (!entries.keepCreator) info.set(PDFName.of('Creator'), PDFString.of(PDF_PRODUCER));
  info.set(PDFName.of('Producer'), PDFString.of(PDF_PRODUCER));
  text('Author', entries.author);
  text('Subject', entries.subject);
  text('Keywords', entries.keywords?.join(', '));
  text('Creator', entries.creator);
  return info;
}

/** Where Chromium's Info dictionary sits, found through the last trailer and xref section. */
interface LocatedInfo {
  context: PDFContext;
  xrefAt: number;
  trailer: PDFDict;
  infoRef: PDFRef;
  /** The dictionary's `<<` and just past its `>>`, as offsets in the file. */
  dictStart: number;
  dictEnd: number;
  info: PDFDict;
}

/** Undefined when the file is not shaped as Chromium writes it (then pdf-lib reads it whole). */
function locateInfo(pdf: PdfBytes): LocatedInfo | undefined {
  const context = PDFContext.create();
  const xref = readXref(pdf, context);
  const infoRef = xref?.trailer.get(PDFName.of('Info'));
  if (!xref || !(infoRef instanceof PDFRef) || xref.trailer.has(PDFName.of('Encrypt'))) return undefined;
  const located = xref.object(infoRef);
  if (!located) return undefined;
  const dictEnd = endOfDict(located.window, located.valueAt);
  const info = dictEnd === undefined ? undefined : parseAt(located.window, located.valueAt, context);
  if (dictEnd === undefined || !(info instanceof PDFDict)) return undefined;
  return {
    context,
    xrefAt: xref.xrefAt,
    trailer: xref.trailer,
    infoRef,
    dictStart: located.at + located.valueAt,
    dictEnd: located.at + dictEnd,
    info,
  };
}

/** The incremental update that redefines Info, to append to a file of `length` bytes ending in `lastByte`. */
function infoUpdate(
  located: LocatedInfo,
  fallbackTitle: string,
  entries: InfoEntries,
  at: { length: number; lastByte: number | undefined },
): Buffer {
  const { length, lastByte } = at;
  const { context, xrefAt, trailer, infoRef } = located;
  const info = pressroomInfo(located.info, fallbackTitle, context, entries);
  const newTrailer = context.obj({});
  for (const [key, value] of trailer.entries()) if (key.asString() !== '/Prev') newTrailer.set(key, value);
  newTrailer.set(PDFName.of('Prev'), PDFNumber.of(xrefAt));

  const lead = lastByte === 0x0a ? '' : '\n';
  const objectAt = length + lead.length;
  const object = `${infoRef.objectNumber} ${infoRef.generationNumber} obj\n${info.toString()}\nendobj\n`;
  const newXrefAt = objectAt + Buffer.byteLength(object, 'latin1');
  const entry = `${String(objectAt).padStart(10, '0')} ${String(infoRef.generationNumber).padStart(5, '0')} n\r\n`;
  return Buffer.from(
    `${lead}${object}xref\n${infoRef.objectNumber} 1\n${entry}trailer\n${newTrailer.toString()}\nstartxref\n${newXrefAt}\n%%EOF\n`,
    'latin1',
  );
}

/** The fast route; undefined when the file is not shaped as Chromium writes it. */
function appendInfoUpdate(pdf: Buffer, fallbackTitle: string, entries: InfoEntries): Buffer | undefined {
  const located = locateInfo(bufferBytes(pdf));
  if (!located) return undefined;
  const { dictStart, dictEnd } = located;
  const update = infoUpdate(located, fallbackTitle, entries, { length: pdf.length, lastByte: pdf[pdf.length - 1] });
  // The old dictionary keeps its `<<` and `>>`, with spaces between: empty, at the same length.
  const blank = Buffer.alloc(dictEnd - dictStart - 4, 0x20);
  return Buffer.concat([pdf.subarray(0, dictStart + 2), blank, pdf.subarray(dictEnd - 2), update]);
}

/**
 * `withDocumentInfo` for a PDF in a file (a long one, spilled as Chromium streamed it), changed where
 * it is: the old dictionary blanked in place and the update appended, so the file is read only at its
 * end and at the Info object. A file of another shape is read whole and rewritten with pdf-lib.
 */
export async function withDocumentInfoInFile(
  file: PdfFile,
  fallbackTitle: string,
  entries: InfoEntries = {},
): Promise<PdfFile> {
  try {
    return await updateInfoInFile(file, fallbackTitle, entries);
  } catch (error) {
    // A full disk, a vanished file: STORAGE_ERROR, as when Chromium's stream could not be spilled.
    throw error instanceof Error && 'syscall' in error ? spillWriteError(error) : error;
  }
}

async function updateInfoInFile(file: PdfFile, fallbackTitle: string, entries: InfoEntries): Promise<PdfFile> {
  const handle = await open(file.path, 'r+');
  try {
    const bytes = fileBytes(handle.fd, file.size);
    const located = locateInfo(bytes);
    if (!located) {
      const rewritten = await rewriteInfo(await readFile(file.path), fallbackTitle, entries);
      await handle.truncate(0);
      await writeAll(handle, rewritten, 0);
      return { path: file.path, size: rewritten.length };
    }
    const { dictStart, dictEnd } = located;
    const update = infoUpdate(located, fallbackTitle, entries, {
      length: file.size,
      lastByte: bytes.slice(file.size - 1, file.size)[0],
    });
    await writeAll(handle, Buffer.alloc(dictEnd - dictStart - 4, 0x20), dictStart + 2);
    await writeAll(handle, update, file.size);
    return { path: file.path, size: file.size + update.length };
  } finally {
    await handle.close();
  }
}

/** The slow route: pdf-lib parses and writes the whole file. */
async function rewriteInfo(pdf: Buffer, fallbackTitle: string, entries: InfoEntries): Promise<Buffer> {
  // updateMetadata: false, or pdf-lib stamps its own Producer and dates.
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  const { context } = doc;
  const info = pressroomInfo(context.lookupMaybe(context.trailerInfo.Info, PDFDict), fallbackTitle, context, entries);
  if (context.trailerInfo.Info instanceof PDFRef) context.assign(context.trailerInfo.Info, info);
  else context.trailerInfo.Info = context.register(info);
  prepareRewrite(doc);
  const bytes = await doc.save({ useObjectStreams: false, addDefaultPage: false, updateFieldAppearances: false });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Offset just past the `>>` that closes the dictionary opening at `start`; strings and comments skipped. */
function endOfDict(pdf: Buffer, start: number): number | undefined {
  if (pdf[start] !== 0x3c || pdf[start + 1] !== 0x3c) return undefined;
  let depth = 0;
  for (let i = start; i < pdf.length; i++) {
    const c = pdf[i];
    if (c === 0x3c && pdf[i + 1] === 0x3c) depth++, i++;
    else if (c === 0x3e && pdf[i + 1] === 0x3e) {
      i++;
      if (--depth === 0) return i + 1;
    } else if (c === 0x3c)
      i = pdf.indexOf(0x3e, i); // hex string
    else if (c === 0x28) i = endOfLiteralString(pdf, i);
    else if (c === 0x25) i = endOfLine(pdf, i); // comment
    if (i < 0) return undefined;
  }
  return undefined;
}

/** Index of the end-of-line character (CR or LF) that ends the line holding `start`. */
function endOfLine(pdf: Buffer, start: number): number {
  for (let i = start; i < pdf.length; i++) if (pdf[i] === 0x0a || pdf[i] === 0x0d) return i;
  return -1;
}

/** Index of the `)` closing the literal string opening at `start` (balanced parentheses, `\` escapes). */
function endOfLiteralString(pdf: Buffer, start: number): number {
  let depth = 0;
  for (let i = start; i < pdf.length; i++) {
    const c = pdf[i];
    if (c === 0x5c) i++;
    else if (c === 0x28) depth++;
    else if (c === 0x29 && --depth === 0) return i;
  }
  return -1;
}
