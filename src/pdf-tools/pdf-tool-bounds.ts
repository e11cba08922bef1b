/** The PDF tools' fixed bounds (config `pdfTools`, docs/pdf-tools.md), each with its reason. */

/** Pages of any one input and of a result: a long report's worth, the same as a document's default page bound. */
export const PDF_TOOLS_MAX_PAGES = 2000;

/** PDFs one merge may combine: a batch of invoices; the page and byte bounds hold whatever the count. */
export const PDF_TOOLS_MAX_MERGE_INPUTS = 20;

/** Deadline of one `pdf_url` download, redirects included: a file server that slow would not deliver 50 MB anyway. */
export const PDF_TOOLS_FETCH_TIMEOUT_MS = 15_000;

/** qpdf processes one server process runs at once: one per core, more requests wait their turn. */
export function qpdfConcurrencyFor(cores: number): number {
  return cores;
}
