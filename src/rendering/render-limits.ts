/** Fixed bounds and choices of the renderer (config `rendering`), each with its reason. */

/**
 * Estimated printing cost per page, tagged and untagged, by which a synchronous request whose laid-out
 * length would print past its deadline is refused at once (DOCUMENT_TOO_LONG_FOR_SYNC) instead of
 * timing out: measured, with margin, on a 2-core machine (docs/long-documents.md "Deadlines").
 */
export const PRINT_MS_PER_PAGE = { tagged: 120, untagged: 50 } as const;

/** Largest HTML a template may produce: far above any real document's, far below what would strain Chromium. */
export const TEMPLATE_OUTPUT_LIMIT_BYTES = 20 * 1024 * 1024;

/** A browser is replaced after this many documents, new one first, to bound what Chromium leaks over time. */
export const BROWSER_RECYCLE_AFTER = 2000;
