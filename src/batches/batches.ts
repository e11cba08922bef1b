/**
 * Batches (issue 40): many documents from one template in one request. Accepting checks every row
 * against the template's fields (batch-rows.ts), then in ONE transaction reserves a credit per item,
 * inserts the batch and its items (job rows) and, with an Idempotency-Key, stores the answer: all or
 * nothing, so a 402 or a 422 leaves no trace. The job workers render the items like create-async jobs
 * (fair across accounts, leased, retried, refunded on failure); `settled` (the worker's hook) counts
 * them, and the last one moves the batch on: to its end and webhook, or to assembling
 * (batch-assembly.ts) for a zip or merged PDF. Cancel marks the unstarted items cancelled and refunds
 * each in one transaction.
 */
import type { Charges } from '../credits/charges.js';
import type { DatabaseHandle, Tx } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import type { BatchRow, BatchStatus, JobRow, NewJob } from '../db/schema.js';
import type { DocumentService, GenerationOptions } from '../documents/documents.js';
import {
  acceptOnce,
  type IdempotencyService,
  type IdempotentRequest,
  type KeyClaim,
} from '../idempotency/idempotency.js';
import { checkWebhookUrl } from '../jobs/jobs.js';
import type { JobWakeups } from '../jobs/job-wakeups.js';
import type { BatchItemHook } from '../jobs/job-worker.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { newJobId, randomId } from '../shared/ids.js';
import { currentRequestId } from '../shared/log.js';
import type { TemplateService } from '../templates/templates.js';
import { batchPayload, type BatchEvent } from '../webhooks/webhook-payloads.js';
import type { WebhookQueue } from '../webhooks/webhook-queue.js';
import { readRows, type RowsSource } from './batch-rows.js';
import * as store from './batches-store.js';

export type BatchOutput = BatchRow['output'];
export type { ItemStatus } from './batches-store.js';

/** A merged PDF holds at most this many items: one qpdf run merges them, within its time and memory ceiling. */
export const MERGED_MAX_ITEMS = 2000;

/** What POST /v1/pdf/batches asks for. */
export interface BatchRequest {
  templateId: string;
  rows: RowsSource;
  output: BatchOutput;
  /** The zip's or merged PDF's name (no extension); null → `batch-<id>`. */
  filename: string | null;
  /** What every item shares (version, finishing, delivery); `filename` is set per item. */
  options: GenerationOptions;
  webhookUrl: string | null;
  webhookSecret: string | null;
  webhookPerItem: boolean;
  idempotency?: IdempotentRequest;
}

export interface AcceptedBatch {
  batchId: string;
  total: number;
  creditsRemaining: number;
}

/** A batch as its owner sees it (times in epoch ms). */
export interface Batch {
  id: string;
  status: BatchStatus;
  templateId: string;
  version: { number: number; tag: string | null } | null;
  output: BatchOutput;
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  processing: number;
  pending: number;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  estimatedSecondsLeft: number | null;
  result: {
    url: string | null;
    filename: string;
    expiresAt: number | null;
    s3Bucket: string | null;
    s3Key: string | null;
  } | null;
  error: { code: string; message: string } | null;
}

/** One item as its batch shows it. */
export interface BatchItemView {
  index: number;
  status: store.ItemStatus;
  filename: string;
  url: string | null;
  expiresAt: number | null;
  s3Bucket: string | null;
  s3Key: string | null;
  error: { code: string; message: string } | null;
  warnings: DocumentWarning[];
}

export interface BatchService {
  accept(accountId: string, request: BatchRequest): Promise<AcceptedBatch>;
  /** BATCH_NOT_FOUND for unknown ids and other accounts' batches alike. */
  get(accountId: string, batchId: string): Promise<Batch>;
  list(accountId: string, page: { limit: number; offset: number }): Promise<{ batches: Batch[]; total: number }>;
  items(
    accountId: string,
    batchId: string,
    filter: { status?: store.ItemStatus; limit: number; offset: number },
  ): Promise<{ items: BatchItemView[]; total: number }>;
  cancel(accountId: string, batchId: string): Promise<Batch>;
  /** The job worker's hook: an item ended. */
  readonly itemHook: BatchItemHook;
}

export interface BatchServiceDeps {
  database: DatabaseHandle;
  documents: DocumentService;
  templates: TemplateService;
  charges: Charges;
  idempotency: IdempotencyService;
  webhooks: WebhookQueue;
  wakeups: JobWakeups;
  allowPrivateNetworks: boolean;
  maxItems: number;
}

export const newBatchId = (): string => `bat_${randomId(20)}`;

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

function toBatch(row: BatchRow, processing: number, now = Date.now()): Batch {
  const done = row.completed + row.failed;
  const left = row.total - row.settled;
  const running = row.status === 'pending' || row.status === 'processing';
  const elapsed = row.started_at === null ? 0 : now - Number(row.started_at);
  const estimate =
    running && done >= 2 && elapsed > 0
      ? Math.ceil((left * elapsed) / done / 1000)
      : row.status === 'assembling'
        ? null
        : running
          ? null
          : 0;
  return {
    id: row.id,
    // An item rendering makes a batch `processing` before its first item settles.
    status: row.status === 'pending' && processing > 0 ? 'processing' : row.status,
    templateId: row.template_id,
    version: row.version_number === null ? null : { number: Number(row.version_number), tag: row.version_tag },
    output: row.output,
    total: row.total,
    completed: row.completed,
    failed: row.failed,
    cancelled: row.cancelled,
    processing,
    pending: Math.max(0, left - processing),
    createdAt: Number(row.created_at),
    startedAt: row.started_at === null ? null : Number(row.started_at),
    completedAt: row.completed_at === null ? null : Number(row.completed_at),
    estimatedSecondsLeft: estimate,
    result: row.result_filename
      ? {
          url: row.result_url,
          filename: row.result_filename,
          expiresAt: row.result_expires_at === null ? null : Number(row.result_expires_at),
          s3Bucket: row.result_s3_bucket,
          s3Key: row.result_s3_key,
        }
      : null,
    error:
      row.error_code && row.error_code !== store.CANCELLED_CODE
        ? { code: row.error_code, message: row.error_message ?? '' }
        : null,
  };
}

function toItem(row: JobRow): BatchItemView {
  const cancelled = row.status === 'failed' && row.error_code === store.CANCELLED_CODE;
  return {
    index: Number(row.batch_index),
    status: cancelled ? 'cancelled' : row.status,
    filename: row.result_filename ?? `${row.filename ?? 'document'}.pdf`,
    url: row.result_url,
    expiresAt: row.result_expires_at === null ? null : Number(row.result_expires_at),
    s3Bucket: row.result_s3_bucket,
    s3Key: row.result_s3_key,
    error: row.status === 'failed' ? { code: row.error_code ?? 'FAILED', message: row.error_message ?? '' } : null,
    warnings: row.warnings ? (JSON.parse(row.warnings) as DocumentWarning[]) : [],
  };
}

export function createBatchService(deps: BatchServiceDeps): BatchService {
  const { database, documents, templates, charges, idempotency, webhooks, wakeups } = deps;

  async function acceptClaimed(
    accountId: string,
    request: BatchRequest,
    claim: Extract<KeyClaim, { kind: 'claimed' }> | undefined,
  ): Promise<AcceptedBatch> {
    checkWebhookUrl(request.webhookUrl, deps.allowPrivateNetworks);
    const template = await templates.resolve(accountId, request.templateId, request.options.version);
    const items = await readRows(request.rows, { fields: template.fields, maxItems: deps.maxItems });
    if (request.output === 'merged' && items.length > MERGED_MAX_ITEMS) {
      throw new ValidationError([
        {
          loc: ['body', 'output'],
          msg: `A merged PDF holds at most ${MERGED_MAX_ITEMS} items; this batch has ${items.length}. Use output "zip" or "links", or send smaller batches`,
          type: 'too_many_items',
        },
      ]);
    }
    // Delivery, finishing and signing checks, once: every item shares them.
    await documents.prepare(accountId, request.templateId, request.options, items[0]!.data);
    const assembled = request.output !== 'links';
    // Items of a zip or merged batch are kept by the service until the one file is built; it goes to the bucket.
    const itemOptions: GenerationOptions = assembled
      ? { ...request.options, storeS3: false, s3Bucket: null, s3Filepath: null, exportType: 'url' }
      : request.options;
    const storable = documents.storable ? documents.storable(itemOptions) : itemOptions;
    const sealedSecret =
      request.webhookUrl && request.webhookSecret ? webhooks.sealSecret(request.webhookSecret) : null;
    const batchId = newBatchId();
    const jobIds = items.map(() => newJobId());
    const now = Date.now();
    const requestId = currentRequestId() ?? null;
    const accepted = await withTransaction(database.db, async (trx) => {
      const paid = await charges.reserveForJobs(accountId, request.templateId, jobIds, trx);
      await store.insertBatch(trx, {
        id: batchId,
        account_id: accountId,
        template_id: request.templateId,
        version_number: template.version?.number ?? null,
        version_tag: template.version?.tag ?? null,
        status: 'pending',
        output: request.output,
        filename: request.filename ?? `batch-${batchId}`,
        options: JSON.stringify(documents.storable ? documents.storable(request.options) : request.options),
        total: items.length,
        settled: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        webhook_url: request.webhookUrl,
        webhook_secret: sealedSecret,
        locked_by: null,
        locked_until: null,
        attempts: 0,
        request_id: requestId,
        created_at: now,
        updated_at: now,
      });
      const rows: NewJob[] = items.map((item, index) => {
        const filename = item.filename ?? `document-${index + 1}`;
        return {
          id: jobIds[index]!,
          account_id: accountId,
          template_id: request.templateId,
          status: 'pending',
          data: JSON.stringify(item.data),
          options: JSON.stringify({ ...storable, filename }),
          filename,
          store_s3: itemOptions.storeS3 ? 1 : 0,
          webhook_url: request.webhookPerItem ? request.webhookUrl : null,
          webhook_secret: request.webhookPerItem ? sealedSecret : null,
          transaction_ref: paid.transactionRefs[index]!,
          attempts: 0,
          // Items keep their order in the account's turn (the claim orders by run_at, then seq).
          run_at: now,
          created_at: now,
          updated_at: now,
          request_id: requestId,
          version_number: template.version?.number ?? null,
          version_tag: template.version?.tag ?? null,
          batch_id: batchId,
          batch_index: index,
        };
      });
      await store.insertItems(trx, rows);
      await wakeups.notifyInTransaction(trx);
      const answer: AcceptedBatch = { batchId, total: items.length, creditsRemaining: paid.balance };
      if (claim) await idempotency.complete(claim, encodeAccepted(answer), trx);
      return answer;
    });
    wakeups.announce();
    return accepted;
  }

  /** Every item has ended: on to assembling (a zip or merged file of what was delivered), or to the end. */
  async function conclude(trx: Tx, batch: BatchRow, now: number): Promise<void> {
    if (batch.output !== 'links' && batch.completed > 0) {
      await store.moveBatch(trx, batch.id, ['pending', 'processing'], { status: 'assembling', updated_at: now });
      return;
    }
    const status = endStatus(batch);
    if (
      await store.moveBatch(trx, batch.id, ['pending', 'processing'], { status, completed_at: now, updated_at: now })
    ) {
      await enqueueBatchWebhook(trx, webhooks, { ...batch, status });
    }
  }

  async function view(row: BatchRow): Promise<Batch> {
    const running = row.status === 'pending' || row.status === 'processing';
    return toBatch(row, running ? await store.countProcessing(database.db, row.id) : 0);
  }

  async function owned(accountId: string, batchId: string): Promise<BatchRow> {
    const row = await store.findBatch(database.db, accountId, batchId);
    if (!row)
      throw new AppError(
        'BATCH_NOT_FOUND',
        'No batch with this id exists for this account; list your batches with GET /v1/pdf/batches.',
      );
    return row;
  }

  return {
    accept(accountId, request) {
      return acceptOnce(idempotency, accountId, request.idempotency, {
        accept: (claim) => acceptClaimed(accountId, request, claim),
        decode: decodeAccepted,
      });
    },

    async get(accountId, batchId) {
      return view(await owned(accountId, batchId));
    },

    async list(accountId, page) {
      const [rows, total] = await Promise.all([
        store.listBatches(database.db, accountId, page),
        store.countBatches(database.db, accountId),
      ]);
      return { batches: await Promise.all(rows.map(view)), total };
    },

    async items(accountId, batchId, filter) {
      await owned(accountId, batchId);
      const [rows, total] = await Promise.all([
        store.listItems(database.db, batchId, filter),
        store.countItems(database.db, batchId, filter.status),
      ]);
      return { items: rows.map(toItem), total };
    },

    async cancel(accountId, batchId) {
      await owned(accountId, batchId);
      const now = Date.now();
      await withTransaction(database.db, async (trx) => {
        const row = await store.findBatch(trx, accountId, batchId);
        if (!row || (row.status !== 'pending' && row.status !== 'processing')) return;
        // Remembered on the batch: items still rendering finish, and the batch then ends cancelled.
        await store.moveBatch(trx, batchId, ['pending', 'processing'], {
          error_code: store.CANCELLED_CODE,
          error_message: 'Cancelled by its owner.',
          updated_at: now,
        });
        const stopped = await store.cancelPendingItems(trx, batchId, now);
        for (const item of stopped)
          await charges.void({ transactionRef: item.transaction_ref, accountId: item.account_id }, trx);
        if (stopped.length === 0) return;
        const batch = await store.settleItems(trx, batchId, 'cancelled', stopped.length, now);
        if (batch.settled >= batch.total) await conclude(trx, batch, now);
      });
      wakeups.announce();
      webhooks.announce();
      return view(await owned(accountId, batchId));
    },

    itemHook: {
      async settled(trx, job, outcome) {
        const now = Date.now();
        const batch = await store.settleItems(trx, job.batch_id!, outcome, 1, now);
        if (batch.settled >= batch.total) await conclude(trx, batch, now);
      },
      afterCommit() {
        wakeups.announce();
        webhooks.announce();
      },
    },
  };
}

function encodeAccepted(answer: AcceptedBatch): unknown {
  return {
    batch_id: answer.batchId,
    status: 'pending',
    total: answer.total,
    credits_remaining: answer.creditsRemaining,
  };
}

function decodeAccepted(stored: unknown): AcceptedBatch {
  const answer = stored as { batch_id: string; total: number; credits_remaining: number };
  return { batchId: answer.batch_id, total: answer.total, creditsRemaining: answer.credits_remaining };
}
