/**
 * Batches (issue 40): many documents from one template in one request. Accepting reads the rows as they
 * stream, each checked against the template's fields and bounded, counted against the account's
 * credits (batch-rows.ts) and spooled to disk; then queues them a chunk at a time (issue 49): the batch
 * row, in `intake` and under a lease, then per chunk ONE transaction that reserves a credit per item
 * and inserts their job rows, then ONE transaction that makes the batch `pending` and, with an
 * Idempotency-Key, stores the answer. A 402 or a 422 found while reading leaves no trace; a refusal or
 * a failure while queuing refunds what was reserved and removes the batch (batch-settling.ts, also
 * after a crash). The job workers render the items like create-async jobs (fair across accounts,
 * leased, retried, refunded on failure); `settled` (the worker's hook) counts them, and the last one
 * moves the batch on (batch-ends.ts). Cancel marks the batch `cancelling` in one short transaction;
 * the settling loop cancels and refunds its unstarted items a chunk at a time.
 */
import type { Charges } from '../credits/charges.js';
import { readBalance } from '../credits/ledger-store.js';
import type { DatabaseHandle } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import type { BatchRow, BatchStatus, JobRow, NewJob } from '../db/schema.js';
import type { DocumentService, GenerationOptions } from '../documents/documents.js';
import {
  acceptOnce,
  type DeferredIdempotentRequest,
  type IdempotencyService,
  type KeyClaim,
} from '../idempotency/idempotency.js';
import { checkWebhookUrl } from '../jobs/jobs.js';
import type { JobWakeups } from '../jobs/job-wakeups.js';
import type { BatchItemHook } from '../jobs/job-worker.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import { AppError, isAppError } from '../shared/errors.js';
import { newJobId, randomId } from '../shared/ids.js';
import { currentRequestId } from '../shared/log.js';
import type { TemplateService } from '../templates/templates.js';
import type { WebhookQueue } from '../webhooks/webhook-queue.js';
import { BATCH_CHUNK_ITEMS, MERGED_MAX_ITEMS } from './batch-bounds.js';
import { conclude } from './batch-ends.js';
import { readRows, type CheckedRows, type RowsSource } from './batch-rows.js';
import { discardIntake, settleCancel } from './batch-settling.js';
import * as store from './batches-store.js';

export type BatchOutput = BatchRow['output'];
export type { ItemStatus } from './batches-store.js';

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
  /** The Idempotency-Key; its fingerprint is taken once the rows have been read (an upload's bytes included). */
  idempotency?: DeferredIdempotentRequest;
}

export interface AcceptedBatch {
  batchId: string;
  total: number;
  creditsRemaining: number;
}

/** A batch as its owner sees it (times in epoch ms). */
export interface Batch {
  id: string;
  /** Never `intake`: such a batch is not accepted yet, and shown to nobody. */
  status: Exclude<BatchStatus, 'intake'>;
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
  /** This process, as the holder of a batch's intake lease. */
  instanceId: string;
  leaseMs: number;
}

export const newBatchId = (): string => `bat_${randomId(20)}`;

/** A cancel under way shows until the batch ends; an item rendering makes a batch `processing` before its first item settles. */
function shownStatus(row: BatchRow, processing: number): Batch['status'] {
  if (row.error_code === store.CANCELLED_CODE && store.RUNNING_STATUSES.includes(row.status)) return 'cancelling';
  if (row.status === 'intake') throw new Error('a batch in intake is shown to nobody');
  return row.status === 'pending' && processing > 0 ? 'processing' : row.status;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A batch row as inserted for its intake. */
type IntakeBatch = Omit<BatchRow, 'seq'>;

function toBatch(row: BatchRow, processing: number, now = Date.now()): Batch {
  const done = row.completed + row.failed;
  const left = row.total - row.settled;
  const running = store.RUNNING_STATUSES.includes(row.status);
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
    status: shownStatus(row, processing),
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
  const settling = { database, charges, webhooks, holder: deps.instanceId, leaseMs: deps.leaseMs };

  /** Reads and checks the rows; bounded by the credits unless a retry may replay a stored answer. */
  async function checkedRows(
    accountId: string,
    request: BatchRequest,
    fields: Parameters<typeof readRows>[1]['fields'],
  ): Promise<CheckedRows> {
    const replayable = request.idempotency ? await idempotency.isStored(accountId, request.idempotency.key) : false;
    const merged = request.output === 'merged' && MERGED_MAX_ITEMS < deps.maxItems;
    return readRows(request.rows, {
      fields,
      maxItems: merged ? MERGED_MAX_ITEMS : deps.maxItems,
      maxItemsReason: merged
        ? (max) => `A merged PDF holds at most ${max} items; use output "zip" or "links", or send smaller batches`
        : undefined,
      credits: replayable ? undefined : await readBalance(database.db, accountId),
    });
  }

  /** The batch row, in intake under this process's lease. */
  function intakeRow(
    accountId: string,
    request: BatchRequest,
    t: { version?: { number: number; tag: string | null } | null },
    total: number,
  ): IntakeBatch {
    const now = Date.now();
    const batchId = newBatchId();
    return {
      id: batchId,
      account_id: accountId,
      template_id: request.templateId,
      version_number: t.version?.number ?? null,
      version_tag: t.version?.tag ?? null,
      status: 'intake',
      output: request.output,
      filename: request.filename ?? `batch-${batchId}`,
      options: JSON.stringify(documents.storable ? documents.storable(request.options) : request.options),
      total,
      settled: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      webhook_url: request.webhookUrl,
      webhook_secret: request.webhookUrl && request.webhookSecret ? webhooks.sealSecret(request.webhookSecret) : null,
      locked_by: deps.instanceId,
      locked_until: now + deps.leaseMs,
      attempts: 0,
      result_file_id: null,
      result_url: null,
      result_filename: null,
      result_expires_at: null,
      result_s3_bucket: null,
      result_s3_key: null,
      error_code: null,
      error_message: null,
      request_id: currentRequestId() ?? null,
      created_at: now,
      updated_at: now,
      started_at: null,
      completed_at: null,
    };
  }

  /** Queues the spooled rows into the intake batch, a chunk per transaction; returns the balance after the last. */
  async function queueItems(batch: IntakeBatch, request: BatchRequest, rows: CheckedRows): Promise<number> {
    const assembled = request.output !== 'links';
    // Items of a zip or merged batch are kept by the service until the one file is built; it goes to the bucket.
    const itemOptions: GenerationOptions = assembled
      ? { ...request.options, storeS3: false, s3Bucket: null, s3Filepath: null, exportType: 'url' }
      : request.options;
    const storable = documents.storable ? documents.storable(itemOptions) : itemOptions;
    let balance = 0;
    let index = 0;
    for await (const chunk of rows.spool.chunks(BATCH_CHUNK_ITEMS)) {
      balance = await withTransaction(database.db, async (trx) => {
        if (!(await store.renewBatchLease(trx, batch.id, deps.instanceId, Date.now() + deps.leaseMs, 'intake'))) {
          throw new AppError(
            'SERVICE_UNAVAILABLE',
            'The service was too busy to queue this batch in time; nothing was charged. Try again.',
          );
        }
        const jobIds = chunk.map(() => newJobId());
        const paid = await charges
          .reserveForJobs(batch.account_id, { subject: request.templateId, jobIds, batchId: batch.id }, trx)
          .catch((error: unknown) => {
            if (!isAppError(error) || error.code !== 'INSUFFICIENT_CREDITS') throw error;
            throw new AppError(
              'INSUFFICIENT_CREDITS',
              `This batch needs ${rows.count} credits and the account has fewer (they were spent while it was being queued). Add credits, or send fewer items; nothing was charged.`,
            );
          });
        const now = Date.now();
        const jobs: NewJob[] = chunk.map((item, i) => {
          const filename = item.filename ?? `document-${index + i + 1}`;
          return {
            id: jobIds[i]!,
            account_id: batch.account_id,
            template_id: request.templateId,
            status: 'pending',
            data: item.data,
            options: JSON.stringify({ ...storable, filename }),
            filename,
            store_s3: itemOptions.storeS3 ? 1 : 0,
            webhook_url: request.webhookPerItem ? request.webhookUrl : null,
            webhook_secret: request.webhookPerItem ? batch.webhook_secret : null,
            transaction_ref: paid.transactionRefs[i]!,
            attempts: 0,
            // Items keep their order in the account's turn (the claim orders by run_at, then seq).
            run_at: batch.created_at,
            created_at: now,
            updated_at: now,
            request_id: batch.request_id,
            version_number: batch.version_number,
            version_tag: batch.version_tag,
            batch_id: batch.id,
            batch_index: index + i,
          };
        });
        await store.insertItems(trx, jobs);
        return paid.balance;
      });
      index += chunk.length;
      await turn();
    }
    return balance;
  }

  async function acceptClaimed(
    batch: IntakeBatch,
    request: BatchRequest,
    rows: CheckedRows,
    claim: Extract<KeyClaim, { kind: 'claimed' }> | undefined,
  ): Promise<AcceptedBatch> {
    await store.insertBatch(database.db, batch);
    const renew = setInterval(
      () =>
        void store
          .renewBatchLease(database.db, batch.id, deps.instanceId, Date.now() + deps.leaseMs, 'intake')
          .catch(() => undefined),
      Math.max(100, Math.floor(deps.leaseMs / 3)),
    );
    try {
      const balance = await queueItems(batch, request, rows);
      const answer: AcceptedBatch = { batchId: batch.id, total: rows.count, creditsRemaining: balance };
      await withTransaction(database.db, async (trx) => {
        if (
          !(await store.moveBatch(trx, batch.id, ['intake'], {
            status: 'pending',
            locked_by: null,
            locked_until: null,
            updated_at: Date.now(),
          }))
        ) {
          throw new AppError(
            'SERVICE_UNAVAILABLE',
            'The service was too busy to queue this batch in time; nothing was charged. Try again.',
          );
        }
        await wakeups.notifyInTransaction(trx);
        if (claim) await idempotency.complete(claim, encodeAccepted(answer), trx);
      });
      wakeups.announce();
      return answer;
    } catch (error) {
      clearInterval(renew);
      // What was reserved is refunded and the batch removed; if this fails too, its lease runs out and the settling loop does it.
      await discardIntake(settling, batch.id).catch(() => undefined);
      throw error;
    } finally {
      clearInterval(renew);
    }
  }

  async function view(row: BatchRow): Promise<Batch> {
    const running = store.RUNNING_STATUSES.includes(row.status);
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
    async accept(accountId, request) {
      checkWebhookUrl(request.webhookUrl, deps.allowPrivateNetworks);
      const template = await templates.resolve(accountId, request.templateId, request.options.version);
      const rows = await checkedRows(accountId, request, template.fields);
      try {
        // Delivery, finishing and signing checks, once: every item shares them.
        await documents.prepare(accountId, request.templateId, request.options, rows.first);
        return await acceptOnce(idempotency, accountId, request.idempotency?.request(), {
          accept: (claim) => acceptClaimed(intakeRow(accountId, request, template, rows.count), request, rows, claim),
          decode: decodeAccepted,
        });
      } finally {
        await rows.spool.remove();
      }
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
      // One short transaction marks the batch, under this process's lease; its unstarted items are then
      // cancelled and refunded a chunk at a time after the answer (batch-settling.ts).
      const now = Date.now();
      const marked = await withTransaction(database.db, (trx) =>
        store.moveBatch(trx, batchId, ['pending', 'processing'], {
          status: 'cancelling',
          error_code: store.CANCELLED_CODE,
          error_message: 'Cancelled by its owner.',
          locked_by: deps.instanceId,
          locked_until: now + deps.leaseMs,
          updated_at: now,
        }),
      );
      const answer = await view(await owned(accountId, batchId));
      if (marked) {
        void settleCancel(settling, batchId).then(() => {
          wakeups.announce();
          webhooks.announce();
        });
      }
      return answer;
    },

    itemHook: {
      async settled(trx, job, outcome) {
        const now = Date.now();
        const batch = await store.settleItems(trx, job.batch_id!, outcome, 1, now);
        if (batch.settled >= batch.total) await conclude(trx, webhooks, batch, now);
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
