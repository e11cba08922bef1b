/**
 * Decorators that count what the renderer and the ledger do, without either knowing about metrics.
 * services.ts wraps each once, right after creating it, so every user (sync route, previews, job
 * worker, admin grants) goes through the counted object.
 */
import type { CreditLedger } from '../credits/ledger.js';
import type { CompactionObserver } from '../finishing/finishing.js';
import { boundOf, type PdfRenderer, type RenderRequest } from '../rendering/pdf-renderer.js';
import { isAppError } from '../shared/errors.js';
import type { Metrics } from './metrics.js';

/** `RENDER_TIMEOUT` → `render_timeout`; anything without a code is `error`. */
function outcomeOf(error: unknown): string {
  return isAppError(error) ? error.code.toLowerCase() : 'error';
}

/** A compaction that left the file as it was: `timeout`, `failed` (thread ended or threw), or `skipped` (a file it does not handle, or no smaller). */
function compactionOutcome(reason: string): string {
  if (reason === 'timeout') return 'timeout';
  if (reason.startsWith('failed') || reason === 'thread ended') return 'failed';
  return 'skipped';
}

/** Counts each compaction the finishing step runs, whether of bytes or of a spooled file. */
export function compactionCounter(metrics: Pick<Metrics, 'compaction'>): CompactionObserver {
  return (result, seconds) => {
    const outcome = result.compacted ? 'compacted' : compactionOutcome(result.reason);
    metrics.compaction({
      outcome,
      bytesBefore: result.bytesBefore,
      bytesAfter: result.bytesAfter,
      seconds,
      spooled: 'file' in result,
    });
  };
}

/** The renderer, counting renders by kind and outcome (and bounds hit) and timing the successful ones. */
export function instrumentRenderer(
  renderer: PdfRenderer,
  metrics: Pick<Metrics, 'render' | 'documentBoundHit'>,
): PdfRenderer {
  async function countedRender<T>(request: RenderRequest, run: () => Promise<T>): Promise<T> {
    const kind = request.kind ?? 'document';
    const startedAt = performance.now();
    try {
      const result = await run();
      metrics.render({ kind, outcome: 'ok', seconds: (performance.now() - startedAt) / 1000 });
      return result;
    } catch (error) {
      metrics.render({ kind, outcome: outcomeOf(error), seconds: (performance.now() - startedAt) / 1000 });
      const bound = boundOf(error);
      if (bound) metrics.documentBoundHit(bound);
      throw error;
    }
  }
  return {
    render: (request) => countedRender(request, () => renderer.render(request)),
    renderSpilling: (request, spill) => countedRender(request, () => renderer.renderSpilling(request, spill)),
    async renderImage(request) {
      const startedAt = performance.now();
      try {
        const result = await renderer.renderImage(request);
        metrics.render({ kind: 'image', outcome: 'ok', seconds: (performance.now() - startedAt) / 1000 });
        return result;
      } catch (error) {
        metrics.render({ kind: 'image', outcome: outcomeOf(error), seconds: (performance.now() - startedAt) / 1000 });
        // The memory bound applies to image renders too.
        const bound = boundOf(error);
        if (bound) metrics.documentBoundHit(bound);
        throw error;
      }
    },
    renderHtml: (request) => renderer.renderHtml(request),
    warmUp: () => renderer.warmUp(),
    isReady: () => renderer.isReady(),
    stats: () => renderer.stats(),
    close: () => renderer.close(),
  };
}

/**
 * The ledger, counting credits as they are written. A debit or refund made inside a caller's
 * transaction is counted when the ledger writes it; if that transaction then rolls back (the database
 * failed mid-way), the counter is one ahead of the ledger. The ledger table stays the truth.
 */
export function instrumentLedger(ledger: CreditLedger, metrics: Pick<Metrics, 'credits'>): CreditLedger {
  return {
    async debit(accountId, charge, trx) {
      const debit = await ledger.debit(accountId, charge, trx);
      metrics.credits('PDFGEN', 1);
      return debit;
    },
    async debitMany(accountId, charge, trx) {
      const debit = await ledger.debitMany(accountId, charge, trx);
      metrics.credits('PDFGEN', charge.jobIds.length);
      return debit;
    },
    async refund(accountId, pdfgenRef, trx) {
      const refunded = await ledger.refund(accountId, pdfgenRef, trx);
      if (refunded) metrics.credits('REFUND', 1);
      return refunded;
    },
    async refundMany(accountId, pdfgenRefs, trx) {
      const refunded = await ledger.refundMany(accountId, pdfgenRefs, trx);
      if (refunded > 0) metrics.credits('REFUND', refunded);
      return refunded;
    },
    async grant(accountId, credits, type, trx) {
      const balance = await ledger.grant(accountId, credits, type, trx);
      metrics.credits(type, credits);
      return balance;
    },
    recordExecTime: (transactionRef, execMs, trx) => ledger.recordExecTime(transactionRef, execMs, trx),
    balance: (accountId) => ledger.balance(accountId),
    list: (accountId, page, filter) => ledger.list(accountId, page, filter),
  };
}
