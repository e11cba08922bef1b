/** Merge: two or more PDFs, their pages one after another in the order given. */
import { ValidationError } from '../shared/errors.js';
import { readPdfInputs, type InputReader, type PdfInput, type PdfInputLimits, type PdfSource } from './pdf-inputs.js';

/** Checks the inputs before any charge: 2 to `maxMergeInputs` readable PDFs, together within the page bound. */
export async function prepareMerge(
  pdfs: PdfSource[],
  limits: PdfInputLimits & { maxMergeInputs: number },
  reader: InputReader,
): Promise<PdfInput[]> {
  if (pdfs.length < 2 || pdfs.length > limits.maxMergeInputs) {
    throw new ValidationError([
      {
        loc: ['body', 'pdfs'],
        msg: `Give 2 to ${limits.maxMergeInputs} PDFs to merge; got ${pdfs.length}`,
        type: 'pdfs_count',
      },
    ]);
  }
  const inputs = await readPdfInputs(
    pdfs,
    pdfs.map((_, i) => ['pdfs', i]),
    limits,
    reader,
  );
  const pages = inputs.reduce((sum, input) => sum + input.pages, 0);
  if (pages > limits.maxPages) {
    throw new ValidationError([
      {
        loc: ['body', 'pdfs'],
        msg: `The merged PDF would have ${pages} pages; the most a result may have is ${limits.maxPages}`,
        type: 'too_many_pages',
      },
    ]);
  }
  return inputs;
}

/** The merged document. */
export function mergePdfs(inputs: PdfInput[], { qpdf, accountId }: InputReader): Promise<Buffer> {
  return qpdf.merge(
    inputs.map((input) => input.pdf),
    accountId,
  );
}
