/** Rotate: every page by one angle, or the pages a map names, each added to the page's own rotation. */
import { readPdfInputs, type InputReader, type PdfInputLimits, type PdfSource } from './pdf-inputs.js';
import { planRotation, rotationsFor } from './page-rotations.js';
import type { PageRotation } from '../pdf/qpdf.js';

/** A checked rotation: the input and what to turn. */
export interface PreparedRotation {
  pdf: Buffer;
  rotations: PageRotation[];
}

/** Checks `rotation` / `page_rotations` (before any download), then the input and the pages they name. */
export async function prepareRotation(
  source: PdfSource,
  angles: { rotation?: number | null; pageRotations?: Record<string, number> | null },
  limits: PdfInputLimits,
  reader: InputReader,
): Promise<PreparedRotation> {
  const plan = planRotation(angles);
  const [input] = await readPdfInputs([source], [[]], limits, reader);
  return { pdf: input!.pdf, rotations: rotationsFor(plan, input!.pages) };
}

/** The document with its pages turned. */
export function rotatePages(prepared: PreparedRotation, { qpdf, accountId }: InputReader): Promise<Buffer> {
  return qpdf.rotate(prepared.pdf, prepared.rotations, accountId);
}
