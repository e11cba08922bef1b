/**
 * How many pages a PDF has, for the page bound (PRESSROOM_MAX_PAGES). Chromium's PDFs are read
 * through their xref table — trailer → /Root → /Pages → /Count — touching a few hundred bytes
 * whatever the size of the file; a file of another shape is parsed whole with pdf-lib.
 */
import { PDFContext, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRef } from '@cantoo/pdf-lib';
import { lastStartXref, offsetInXref, parseAt } from './pdf-xref.js';

/** The page count of `pdf`. */
export async function countPages(pdf: Buffer): Promise<number> {
  const counted = pageCountFromXref(pdf);
  if (counted !== undefined) return counted;
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  return doc.getPageCount();
}

/** The root page tree's /Count, found through the last classic xref section; undefined for another shape. */
function pageCountFromXref(pdf: Buffer): number | undefined {
  const context = PDFContext.create();
  const xrefAt = lastStartXref(pdf);
  if (xrefAt === undefined || pdf.toString('latin1', xrefAt, xrefAt + 4) !== 'xref') return undefined;
  const trailerAt = pdf.indexOf('trailer', xrefAt, 'latin1');
  if (trailerAt < 0) return undefined;
  const trailer = parseAt(pdf, trailerAt + 'trailer'.length, context);
  if (!(trailer instanceof PDFDict)) return undefined;
  const objectAt = (ref: unknown): PDFDict | undefined => {
    if (!(ref instanceof PDFRef)) return undefined;
    const at = offsetInXref(pdf, xrefAt, trailerAt, ref.objectNumber);
    const header = at === undefined ? null : /^(\d+)\s+(\d+)\s+obj\s*/.exec(pdf.toString('latin1', at, at + 40));
    if (!header || Number(header[1]) !== ref.objectNumber || Number(header[2]) !== ref.generationNumber) return undefined;
    const object = parseAt(pdf, at! + header[0].length, context);
    return object instanceof PDFDict ? object : undefined;
  };
  const pages = objectAt(objectAt(trailer.get(PDFName.of('Root')))?.get(PDFName.of('Pages')));
  const count = pages?.get(PDFName.of('Count'));
  return count instanceof PDFNumber && Number.isSafeInteger(count.asNumber()) ? count.asNumber() : undefined;
}
