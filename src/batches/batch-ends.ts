/**
 * How a batch ends (issue 40): where its counts put it, the webhook that says so, and the step once its
 * last item has settled (to assembling for a zip or merged file, or straight to its end). Used by the
 * item hook, the cancel's settling (batch-settling.ts) and the assembly (batch-assembly.ts).
 */
import type { Tx } from '../db/database.js';
import type { BatchRow, BatchStatus } from '../db/schema.js';
import { batchPayload, type BatchEvent } from '../webhooks/webhook-payloads.js';
import type { WebhookQueue } from '../webhooks/webhook-queue.js';
import * as store from './batches-store.js';

/** Where a batch ends once every item has: by its counts, or cancelled if a cancel came. */
export function endStatus(batch: Pick<BatchRow, 'completed' | 'failed' | 'cancelled' | 'error_code'>): BatchStatus {
  if (batch.cancelled > 0 || batch.error_code === store.CANCELLED_CODE) return 'cancelled';
  if (batch.completed === 0) return 'failed';
  return batch.failed > 0 ? 'completed_with_errors' : 'completed';
}

const EVENTS: Partial<Record<BatchStatus, BatchEvent>> = {
  completed: 'pdf.batch.completed',
  completed_with_errors: 'pdf.batch.completed',
  cancelled: 'pdf.batch.cancelled',
  failed: 'pdf.batch.failed',
};

/** Enqueues the batch's webhook in the transaction that ends it (on its first item's row). */
export async function enqueueBatchWebhook(trx: Tx, webhooks: WebhookQueue, batch: BatchRow): Promise<boolean> {
  const event = EVENTS[batch.status];
  if (!batch.webhook_url || !event) return false;
  const payload = batchPayload(event, {
    batchId: batch.id,
    status: batch.status,
    counts: { total: batch.total, completed: batch.completed, failed: batch.failed, cancelled: batch.cancelled },
    result: batch.result_filename
      ? {
          url: batch.result_url,
          filename: batch.result_filename,
          s3Bucket: batch.result_s3_bucket,
          s3Key: batch.result_s3_key,
        }
      : null,
  });
  return webhooks.enqueue(trx, {
    jobId: await store.anchorJobId(trx, batch.id),
    event,
    url: batch.webhook_url,
    sealedSecret: batch.webhook_secret,
    payload,
    requestId: batch.request_id,
  });
}

/** Every item has ended: on to assembling (a zip or merged file of what was delivered), or to the end. */
export async function conclude(trx: Tx, webhooks: WebhookQueue, batch: BatchRow, now: number): Promise<void> {
  const from = store.RUNNING_STATUSES;
  if (batch.output !== 'links' && batch.completed > 0) {
    await store.moveBatch(trx, batch.id, from, {
      status: 'assembling',
      locked_by: null,
      locked_until: null,
      updated_at: now,
    });
    return;
  }
  const status = endStatus(batch);
  if (
    await store.moveBatch(trx, batch.id, from, {
      status,
      locked_by: null,
      locked_until: null,
      completed_at: now,
      updated_at: now,
    })
  ) {
    await enqueueBatchWebhook(trx, webhooks, { ...batch, status });
  }
}
