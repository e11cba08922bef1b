/**
 * Merge: two or more PDFs, their pages one after another in the order given, by qpdf (`--empty --pages`).
 * qpdf drops the inputs' structure trees, so when one was tagged the inputs, unpacked by qpdf first
 * (pdf-lib inflates object streams unbounded), are merged again on an accessibility thread with their
 * trees kept as one (accessibility/merge-tagged.ts).
 */
import { mergeTaggedOffThread } from '../accessibility/accessibility-thread.js';
import { isAppError, ValidationError } from '../shared/errors.js';
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
export async function mergePdfs(inputs: PdfInput[], { qpdf, accountId, warnings }: InputReader): Promise<Buffer> {
  const merged = await qpdf.merge(
    inputs.map((input) => input.pdf),
    accountId,
  );
  // qpdf writes no object streams and keeps the pages' (and annotations') keys into the tree it drops: a
  // result without one had no tagged input. Told here, not by qpdf's inspection of each input: its JSON
  // of the catalog alone resolves every object of the file, as costly as rewriting it.
  if (!merged.includes('/StructParent')) return merged;
  const unpacked: Buffer[] = [];
  // One qpdf run at a time, as split's parts: a merge of 20 inputs does not hold (or queue for) 20 slots.
  for (const input of inputs) unpacked.push(await qpdf.withoutObjectStreams(input.pdf, accountId, 'paid'));
  // Stale keys without a tree (an earlier qpdf merge's pages): no input tagged, qpdf's result stands.
  try {
    return (await mergeTaggedOffThread(unpacked, accountId)) ?? merged;
  } catch (error) {
    // Too long or too complex to merge with its tags (a heap or deadline past its bound, a file pdf-lib
    // cannot read): the pages still merge, untagged, and the answer says so.
    if (!isAppError(error) || (error.code !== 'PDF_TOO_COMPLEX' && error.code !== 'PDF_TOOL_FAILED')) throw error;
    warnings?.push({
      code: 'TAGS_NOT_KEPT',
      message:
        'The merged PDF is not tagged: the inputs were too large or complex to merge with their tags, so screen readers get no structure. Merge fewer or shorter documents to keep them.',
    });
    return merged;
  }
}
