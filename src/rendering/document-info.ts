/**
 * The Info dictionary every PDF leaves with: Title = the document's own `<title>`, else the template's
 * name; Creator and Producer = `Pressroom <version>`. Chromium would say otherwise: an untitled page
 * gets its URL's host as Title (`render.pressroom.invalid`, our closed room's fake origin) and its user
 * agent and Skia's version as Creator and Producer (`HeadlessChrome/156…`, `Skia/PDF m156`).
 *
 * Chromium writes one classic xref table with Info as an object of its own, so the new Info goes in as
 * an incremental update: the same object number redefined, one xref entry and a trailer pointing back
 * to Chromium's (ISO 32000-1, 7.5.6). Only the trailer, one xref entry and the old Info are read, so
 * the cost hardly grows with the document: on the peers' invoice (106 KB, 2 busy cores) 0.13 ms p50 and
 * 0.6 ms CPU, where a pdf-lib load and save takes 41 ms and 15 ms CPU; on the 33-page tagged report
 * (5.6 MB) 10 ms, mostly copying the bytes, against 3 s. The superseded dictionary is blanked in
 * place, at the same length so that no offset moves, so the browser's version is gone from the bytes
 * too. A file of another shape (an xref stream, an Info in an older section) is rewritten whole with
 * pdf-lib instead.
 */
import { PDFContext, PDFDict, PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRef, PDFString } from '@cantoo/pdf-lib';
import { VERSION } from '../version.js';
import { prepareRewrite } from './pdf-rewrite.js';
import { lastStartXref, offsetInXref, parseAt } from './pdf-xref.js';
import { RENDER_ORIGIN } from './chromium/closed-room.js';

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
 * Returns the PDF with Pressroom's Title, Creator and Producer in its Info dictionary (other entries,
 * such as Chromium's CreationDate, are kept). `fallbackTitle` is used when the document has no title.
 */
export async function withDocumentInfo(pdf: Buffer, fallbackTitle: string): Promise<Buffer> {
  const pieces = infoUpdatePieces(pdf, fallbackTitle);
  return pieces ? Buffer.concat(pieces) : rewriteInfo(pdf, fallbackTitle);
}

/**
 * `withDocumentInfo` as pieces to write one after another (a spooled PDF, documents.ts): views of `pdf`
 * and the few bytes of the update, so a long PDF is not copied into a new buffer. `pdf` must not be
 * used afterwards: the old Info dictionary is blanked in it, in place.
 */
export async function documentInfoPieces(pdf: Buffer, fallbackTitle: string): Promise<Buffer[]> {
  return infoUpdatePieces(pdf, fallbackTitle, { inPlace: true }) ?? [await rewriteInfo(pdf, fallbackTitle)];
}

/**
 * The Title in the PDF's Info dictionary; undefined when there is none. Ghostscript's PDF/A-1 pass drops
 * a UTF-16 Title, so pdfa.ts reads it here first.
 */
export async function readInfoTitle(pdf: Buffer): Promise<string | undefined> {
  const located = locateInfo(pdf);
  if (located) return titleOf(located.info);
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  return titleOf(doc.context.lookupMaybe(doc.context.trailerInfo.Info, PDFDict));
}

function titleOf(info: PDFDict | undefined): string | undefined {
  const title = info?.lookup(PDFName.of('Title'));
  return title instanceof PDFString || title instanceof PDFHexString ? title.decodeText() : undefined;
}

/** Info entries as Pressroom writes them over `old`. */
function pressroomInfo(old: PDFDict | undefined, fallbackTitle: string, context: PDFContext): PDFDict {
  const info = context.obj({});
  for (const [key, value] of old?.entries() ?? []) info.set(key, value);
  info.set(PDFName.of('Title'), PDFHexString.fromText(documentTitle(titleOf(old), fallbackTitle)));
  info.set(PDFName.of('Creator'), PDFString.of(PDF_PRODUCER));
  info.set(PDFName.of('Producer'), PDFString.of(PDF_PRODUCER));
  return info;
}

/** Where Chromium's Info dictionary sits, found through the last trailer and xref section. */
interface LocatedInfo {
  context: PDFContext;
  xrefAt: number;
  trailer: PDFDict;
  infoRef: PDFRef;
  /** The dictionary's `<<` and just past its `>>`. */
  dictStart: number;
  dictEnd: number;
  info: PDFDict;
}

/** Undefined when the file is not shaped as Chromium writes it (then pdf-lib reads it whole). */
function locateInfo(pdf: Buffer): LocatedInfo | undefined {
  const context = PDFContext.create();
  const xrefAt = lastStartXref(pdf);
  if (xrefAt === undefined || pdf.toString('latin1', xrefAt, xrefAt + 4) !== 'xref') return undefined;
  const trailerAt = pdf.indexOf('trailer', xrefAt, 'latin1');
  const trailer = trailerAt < 0 ? undefined : parseAt(pdf, trailerAt + 'trailer'.length, context);
  const infoRef = trailer instanceof PDFDict ? trailer.get(PDFName.of('Info')) : undefined;
  if (!(trailer instanceof PDFDict) || !(infoRef instanceof PDFRef) || trailer.has(PDFName.of('Encrypt'))) return undefined;
  const infoAt = offsetInXref(pdf, xrefAt, trailerAt, infoRef.objectNumber);
  const header = infoAt === undefined ? null : /^(\d+)\s+(\d+)\s+obj\s*/.exec(pdf.toString('latin1', infoAt, infoAt + 40));
  if (!header || Number(header[1]) !== infoRef.objectNumber || Number(header[2]) !== infoRef.generationNumber) return undefined;
  const dictStart = infoAt! + header[0].length;
  const dictEnd = endOfDict(pdf, dictStart);
  const info = dictEnd === undefined ? undefined : parseAt(pdf, dictStart, context);
  if (dictEnd === undefined || !(info instanceof PDFDict)) return undefined;
  return { context, xrefAt, trailer, infoRef, dictStart, dictEnd, info };
}

/**
 * The fast route, as the pieces of the new file; undefined when the file is not shaped as Chromium
 * writes it. `inPlace`: the old dictionary is blanked in `pdf` itself, which then makes the first piece.
 */
function infoUpdatePieces(pdf: Buffer, fallbackTitle: string, options: { inPlace?: boolean } = {}): Buffer[] | undefined {
  const located = locateInfo(pdf);
  if (!located) return undefined;
  const { context, xrefAt, trailer, infoRef, dictStart, dictEnd } = located;
  const info = pressroomInfo(located.info, fallbackTitle, context);
  const newTrailer = context.obj({});
  for (const [key, value] of trailer.entries()) if (key.asString() !== '/Prev') newTrailer.set(key, value);
  newTrailer.set(PDFName.of('Prev'), PDFNumber.of(xrefAt));

  const lead = pdf[pdf.length - 1] === 0x0a ? '' : '\n';
  const objectAt = pdf.length + lead.length;
  const object = `${infoRef.objectNumber} ${infoRef.generationNumber} obj\n${info.toString()}\nendobj\n`;
  const newXrefAt = objectAt + Buffer.byteLength(object, 'latin1');
  const entry = `${String(objectAt).padStart(10, '0')} ${String(infoRef.generationNumber).padStart(5, '0')} n\r\n`;
  const update = `${lead}${object}xref\n${infoRef.objectNumber} 1\n${entry}trailer\n${newTrailer.toString()}\nstartxref\n${newXrefAt}\n%%EOF\n`;
  // The old dictionary keeps its `<<` and `>>`, with spaces between: empty, at the same length.
  if (options.inPlace) {
    pdf.fill(0x20, dictStart + 2, dictEnd - 2);
    return [pdf, Buffer.from(update, 'latin1')];
  }
  const blank = Buffer.alloc(dictEnd - dictStart - 4, 0x20);
  return [pdf.subarray(0, dictStart + 2), blank, pdf.subarray(dictEnd - 2), Buffer.from(update, 'latin1')];
}

/** The slow route: pdf-lib parses and writes the whole file. */
async function rewriteInfo(pdf: Buffer, fallbackTitle: string): Promise<Buffer> {
  // updateMetadata: false, or pdf-lib stamps its own Producer and dates.
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  const { context } = doc;
  const info = pressroomInfo(context.lookupMaybe(context.trailerInfo.Info, PDFDict), fallbackTitle, context);
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
    if (c === 0x3c && pdf[i + 1] === 0x3c) (depth++, i++);
    else if (c === 0x3e && pdf[i + 1] === 0x3e) {
      i++;
      if (--depth === 0) return i + 1;
    } else if (c === 0x3c) i = pdf.indexOf(0x3e, i); // hex string
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
