/** Fixed bounds and choices of the renderer (config `rendering`), each with its reason. */

/**
 * Printing cost per page, tagged and untagged, that the early refusal of a synchronous request
 * (DOCUMENT_TOO_LONG_FOR_SYNC) starts with, until this installation has printed a long document and
 * uses its own fastest rate instead (print-rates.ts; docs/long-documents.md "Deadlines"). 0: no estimate.
 */
export const PRINT_MS_PER_PAGE = { tagged: 120, untagged: 50 } as const;

/** Largest HTML a template may produce: far above any real document's, far below what would strain Chromium. */
export const TEMPLATE_OUTPUT_LIMIT_BYTES = 20 * 1024 * 1024;

/** A browser is replaced after this many documents, new one first, to bound what Chromium leaks over time. */
export const BROWSER_RECYCLE_AFTER = 2000;

/**
 * Tables cut into parts before printing (browser/pages/long-tables.ts; docs/long-documents.md
 * "Long tables"): from `minRows` body rows, in parts of `partRows`. Below 500 rows a table prints at
 * its rows' cost anyway. Parts of 20–50 rows printed the 15,000-row ledger as fast as tables of 500
 * written by hand, parts of 500 a third slower, and smaller parts took less memory down to 20
 * (performance-log/2026-12-03-long-tables.md); 24 keeps every `:nth-child(2n|3n|4n|6n|8n)` pattern.
 */
export const LONG_TABLES = { minRows: 500, partRows: 24 } as const;
