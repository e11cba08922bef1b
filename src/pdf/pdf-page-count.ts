/**
 * How many pages a PDF has, for the page bound (PRESSROOM_MAX_PAGES). Chromium's PDFs are read
 * through their xref table — trailer → /Root → /Pages → /Count — touching a few hundred bytes
 * whatever the size of the file (in memory or spilled to a file); a file of another shape is parsed
 * whole with pdf-lib.
 */
import { PDFContext, PDFDict, PDFDocument, PDFName, PDFNumber, PDFRef } from '@cantoo/pdf-lib';
import { pdfBuffer, readFileAt, type PrintedPdf } from './pdf-file.js';
import { bufferBytes, parseAt, readXref, type PdfBytes } from './pdf-xref.js';

/** The page count of `pdf`. */
export async function countPages(pdf: PrintedPdf): Promise<number> {
  const counted = Buffer.isBuffer(pdf) ? pageCountFromXref(bufferBytes(pdf)) : readFileAt(pdf, pageCountFromXref);
  if (counted !== undefined) return counted;
  const doc = await PDFDocument.load(await pdfBuffer(pdf), { updateMetadata: false, ignoreEncryption: true });
  return doc.getPageCount();
}

/** The root page tree's /Count, found through the last classic xref section; undefined for another shape. */
function pageCountFromXref(pdf: PdfBytes): number | undefined {
  const context = PDFContext.create();
  const xref = readXref(pdf, context);
  if (!xref) return undefined;
  const dictAt = (ref: unknown): PDFDict | undefined => {
    const located = ref instanceof PDFRef ? xref.object(ref) : undefined;
    const object = located && parseAt(located.window, located.valueAt, context);
    return object instanceof PDFDict ? object : undefined;
  };
  const pages = dictAt(dictAt(xref.trailer.get(PDFName.of('Root')))?.get(PDFName.of('Pages')));
  const count = pages?.get(PDFName.of('Count'));
  return count instanceof PDFNumber && Number.isSafeInteger(count.asNumber()) ? count.asNumber() : undefined;
}
