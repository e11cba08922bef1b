import type { PrintParams } from '../browser/pages/print-page.js';
import type { Config } from '../shared/config.js';
import { AppError } from '../shared/errors.js';

/**
 * The early refusal of a synchronous request (docs/long-documents.md "Deadlines"): pages estimated
 * from the laid-out height (CSS px at 96 per inch) over the paper's printable height, times the
 * cost per page (print-rates.ts: this installation's fastest), against what is left of the deadline.
 * The estimate errs low (the screen layout is at least as wide as the printed one, so rarely taller,
 * and the rate is the fastest seen), so a refused document would not have made it; one that slips
 * through still ends in RENDER_TIMEOUT.
 */
export function refuseTooLongForSync(input: {
  heightPx: number;
  params: PrintParams;
  /** When the render got its slot (performance.now()). */
  slotStartedAt: number;
  /** Milliseconds a page takes to print here; 0: no estimate. */
  perPage: number;
  options: Pick<Config['rendering'], 'timeoutMs' | 'asyncTimeoutMs'>;
}): void {
  const { heightPx, params, slotStartedAt, perPage, options } = input;
  if (perPage <= 0) return;
  const paperHeightIn = params.landscape ? (params.paperWidth ?? 8.27) : (params.paperHeight ?? 11.7);
  const printableIn = Math.max(1, paperHeightIn - (params.marginTop ?? 0) - (params.marginBottom ?? 0));
  const pages = Math.max(1, Math.ceil(heightPx / (printableIn * 96)));
  const estimateMs = pages * perPage;
  const leftMs = options.timeoutMs - (performance.now() - slotStartedAt);
  if (estimateMs <= leftMs) return;
  throw new AppError(
    'DOCUMENT_TOO_LONG_FOR_SYNC',
    `This document lays out to about ${pages} pages, which would take about ${Math.ceil(estimateMs / 1000)} s to print: more than the ` +
      `${Math.round(options.timeoutMs / 1000)} s a synchronous request may take. Send it to POST /v1/pdf/create-async ` +
      `(up to ${Math.round(options.asyncTimeoutMs / 1000)} s per document), or print it untagged (tagged: false), which is faster. Nothing was charged.`,
    { details: { estimatedPages: pages, estimatedPrintMs: estimateMs, endpoint: '/v1/pdf/create-async' } },
  );
}
