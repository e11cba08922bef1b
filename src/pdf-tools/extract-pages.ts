/** Extract pages: the pages a selection names (`3, 1-2`), in the order it names them. */
import { readPdfInputs, type InputReader, type PdfInputLimits, type PdfSource } from './pdf-inputs.js';
import { parsePageSelection, selectedPages } from '../pdf/page-selection.js';

/** A checked extraction: the input and the pages to keep, in order. */
export interface PreparedExtraction {
  pdf: Buffer;
  pages: number[];
}

/** Checks the selection's syntax (before any download), then the input and the pages against it. */
export async function prepareExtraction(
  source: PdfSource,
  pages: string,
  limits: PdfInputLimits,
  reader: InputReader,
): Promise<PreparedExtraction> {
  const selection = parsePageSelection(pages);
  const [input] = await readPdfInputs([source], [[]], limits, reader);
  return { pdf: input!.pdf, pages: selectedPages(selection, input!.pages, limits.maxPages) };
}

/** A new document of the selected pages. */
export function extractPages(prepared: PreparedExtraction, { qpdf, accountId }: InputReader): Promise<Buffer> {
  return qpdf.selectPages(prepared.pdf, prepared.pages, accountId);
}
