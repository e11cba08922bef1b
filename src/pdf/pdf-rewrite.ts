/**
 * Before a whole-file save with @cantoo/pdf-lib: the two things its writer does differently from
 * pdf-lib 1.17, which it replaced.
 * - The header: pdf-lib always wrote `%PDF-1.7`; the fork keeps the loaded file's (`%PDF-1.4` from
 *   Chromium), which would under-declare what the file uses (xref streams, /ActualText: PDF 1.5).
 * - The trailer's /Size: the fork counts the loaded file's xref stream and object streams, which a save
 *   without object streams (all of ours) does not write, so /Size would exceed the highest object
 *   number plus one, which `qpdf --check` reports as damage.
 */
import { PDFHeader, PDFName, PDFRawStream, type PDFDocument } from '@cantoo/pdf-lib';

/** The loaded file's cross-reference and object streams: registered on load, never written by a save without object streams. */
const NOT_WRITTEN = new Set(['/XRef', '/ObjStm']);

export function prepareRewrite(doc: PDFDocument, version: '1.4' | '1.7' = '1.7'): void {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  doc.context.header = PDFHeader.forVersion(major, minor);
  let largest = 0;
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    if (object instanceof PDFRawStream && NOT_WRITTEN.has(String(object.dict.get(PDFName.of('Type'))))) continue;
    if (ref.objectNumber > largest) largest = ref.objectNumber;
  }
  doc.context.largestObjectNumber = largest;
}
