/**
 * Asynchronous PDF jobs: accept (`POST /v1/pdf/create-async`), read and list. Accepting runs the same
 * checks as a synchronous request in the same order (webhook URL 422 → template 404/403 → a strict
 * template's required fields 422 → S3 target 400 → credit 402), then debits the credit and inserts
 * the job in ONE transaction: either both happen or neither (a 402 writes no job). With an
 * Idempotency-Key the key is claimed first and its answer stored in that same transaction, so a
 * retry gets the same job, whatever process died when. Workers (job-worker.ts) take it from there.
 */
import type { Charges } from '../credits/charges.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import type { DatabaseHandle } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import type { JobRow } from '../db/schema.js';
import type { DocumentService, GenerationOptions } from '../documents/documents.js';
import { storedVerdict } from '../einvoice/einvoice.js';
import { checkUrl } from '../net/check-url.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { newJobId } from '../shared/ids.js';
import { currentRequestId } from '../shared/log.js';
import {
  acceptOnce,
  type IdempotencyService,
  type IdempotentRequest,
  type KeyClaim,
} from '../idempotency/idempotency.js';
import { countPendingDeliveries } from '../webhooks/deliveries-store.js';
import type { WebhookQueue } from '../webhooks/webhook-queue.js';
import type { JobWakeups } from './job-wakeups.js';
import * as store from './jobs-store.js';

/** The four states of a job. */
export type JobStatus = store.JobStatus;
/** Every status, in lifecycle order (the listing filter's enum). */
export const JOB_STATUSES: readonly JobStatus[] = ['pending', 'processing', 'completed', 'failed'];

/** What create-async asks for. */
export interface AsyncJobRequest {
  templateId: string;
  data: Record<string, unknown>;
  options: GenerationOptions;
  /** The custom filename as given, shown on the job (null when none was given). */
  filename: string | null;
  webhookUrl: string | null;
  webhookSecret: string | null;
  /** The accepting request's id, kept on the job for the worker's logs and the webhook; defaults to the current one. */
  requestId?: string | null;
  /** With an Idempotency-Key: a repeat gets the first job, charged once. */
  idempotency?: IdempotentRequest;
}

/** What accepting answers: the job, and the balance after its credit was taken. */
export interface AcceptedJob {
  jobId: string;
  creditsRemaining: number;
}

/** A job as its owner sees it (times in epoch ms). */
export interface Job {
  id: string;
  status: JobStatus;
  templateId: string;
  filename: string | null;
  storeS3: boolean;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
  resultUrl: string | null;
  resultFilename: string | null;
  resultExpiresAt: number | null;
  resultS3Bucket: string | null;
  resultS3Key: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** The template version it renders (its tag when accepted); null for the draft. */
  version: { number: number; tag: string | null } | null;
  /** The render's warnings (issue 13); empty when none. */
  warnings: DocumentWarning[];
  /** The checks that judged its e-invoice (`built-in`, or the official rule sets); null without an e-invoice. */
  einvoiceChecks: string | null;
  /** The PDF/UA check its file passed, when completed under pdf_ua; null otherwise. */
  accessibilityChecks: string | null;
}

/** Jobs as the API sees them. */
export interface JobService {
  /** Checks, charges and queues; answers at once. */
  accept(accountId: string, request: AsyncJobRequest): Promise<AcceptedJob>;
  /** The caller's job; JOB_NOT_FOUND for unknown ids and other accounts' jobs alike. */
  get(accountId: string, jobId: string): Promise<Job>;
  list(
    accountId: string,
    filter: { status?: JobStatus; limit: number; offset: number },
  ): Promise<{ jobs: Job[]; total: number }>;
  /** Queue depth and the oldest due job's wait, for /metrics (all accounts). */
  queueStats(): Promise<QueueStats>;
  /**
   * Retention: deletes jobs that finished more than `retentionDays` ago (their data, result links and
   * webhook records with them); returns how many. Their credit transactions stay: the ledger is
   * permanent. No-op when `retentionDays` is 0.
   */
  sweep(now?: number): Promise<number>;
}

/** The state of the job and webhook queues at one moment. */
export interface QueueStats {
  pending: number;
  processing: number;
  /** now − run_at of the longest-waiting due pending job; 0 when none is due. */
  oldestDueAgeMs: number;
  webhooksPending: number;
  /** Pending jobs per account, the accounts with the most first (at most QUEUE_STATS_ACCOUNTS of them). */
  pendingByAccount: { accountId: string; pending: number }[];
}

/** Accounts listed in QueueStats.pendingByAccount at most, so a metric's label set stays bounded. */
export const QUEUE_STATS_ACCOUNTS = 20;

/** What the job service needs. */
export interface JobServiceDeps {
  database: DatabaseHandle;
  documents: DocumentService;
  charges: Charges;
  idempotency: IdempotencyService;
  webhooks: WebhookQueue;
  wakeups: JobWakeups;
  allowPrivateNetworks: boolean;
  /** Days a finished job is kept (0: forever). */
  retentionDays: number;
}

const SWEEP_BATCH = 500;
const DAY_MS = 86_400_000;

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    status: row.status,
    templateId: row.template_id,
    filename: row.filename,
    storeS3: row.store_s3 === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    completedAt: row.completed_at === null ? null : Number(row.completed_at),
    resultUrl: row.result_url,
    resultFilename: row.result_filename,
    resultExpiresAt: row.result_expires_at === null ? null : Number(row.result_expires_at),
    resultS3Bucket: row.result_s3_bucket,
    resultS3Key: row.result_s3_key,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    version: row.version_number === null ? null : { number: Number(row.version_number), tag: row.version_tag },
    warnings: row.warnings ? (JSON.parse(row.warnings) as DocumentWarning[]) : [],
    einvoiceChecks: storedVerdict(row.einvoice_verdict)?.checks ?? null,
    accessibilityChecks: row.accessibility_checks,
  };
}

/**
 * `webhook_url` must be https and not a private address on its face (the delivery re-checks the
 * resolved address). With PRESSROOM_ALLOW_PRIVATE_NETWORKS=true, http and loopback are accepted too.
 */
export function checkWebhookUrl(url: string | null, allowPrivateNetworks: boolean): void {
  if (url === null) return;
  const verdict = checkUrl(url, { allowPrivateNetworks, requireHttps: true });
  if (!verdict.ok) {
    const type =
      verdict.reason === 'invalid-url'
        ? 'url_parsing'
        : verdict.reason === 'private-address'
          ? 'url_not_public'
          : 'url_scheme';
    throw new ValidationError([{ loc: ['body', 'webhook_url'], msg: `webhook_url ${verdict.message}`, type }]);
  }
}

/** Creates the job service. */
export function createJobService(deps: JobServiceDeps): JobService {
  const { database, documents, charges, idempotency, webhooks, wakeups } = deps;
  /** Prepares, then charges, inserts the job and stores the key's answer in one transaction. */
  async function acceptClaimed(
    accountId: string,
    request: AsyncJobRequest,
    claim: Extract<KeyClaim, { kind: 'claimed' }> | undefined,
  ): Promise<AcceptedJob> {
    checkWebhookUrl(request.webhookUrl, deps.allowPrivateNetworks);
    const { template, einvoice } = await documents.prepare(
      accountId,
      request.templateId,
      request.options,
      request.data,
    );
    const sealedSecret =
      request.webhookUrl && request.webhookSecret ? webhooks.sealSecret(request.webhookSecret) : null;
    const jobId = newJobId();
    const now = Date.now();
    const accepted = await withTransaction(database.db, async (trx) => {
      const paid = await charges.reserve(accountId, request.templateId, { jobId }, trx);
      await store.insertJob(trx, {
        id: jobId,
        account_id: accountId,
        template_id: request.templateId,
        status: 'pending',
        data: JSON.stringify(request.data),
        // protect's passwords sealed (documents/finishing-options.ts): a row never holds them in the clear.
        options: JSON.stringify(documents.storable ? documents.storable(request.options) : request.options),
        filename: request.filename,
        store_s3: request.options.storeS3 ? 1 : 0,
        webhook_url: request.webhookUrl,
        webhook_secret: sealedSecret,
        transaction_ref: paid.transactionRef,
        attempts: 0,
        run_at: now,
        locked_by: null,
        locked_until: null,
        last_error: null,
        error_code: null,
        error_message: null,
        result_url: null,
        result_filename: null,
        result_expires_at: null,
        result_s3_bucket: null,
        result_s3_key: null,
        created_at: now,
        updated_at: now,
        started_at: null,
        completed_at: null,
        request_id: request.requestId ?? currentRequestId() ?? null,
        version_number: template.version?.number ?? null,
        version_tag: template.version?.tag ?? null,
        einvoice_verdict: einvoice ? JSON.stringify(einvoice) : null,
      });
      await wakeups.notifyInTransaction(trx);
      const answer: AcceptedJob = { jobId, creditsRemaining: paid.balance };
      if (claim) await idempotency.complete(claim, encodeAccepted(answer), trx);
      return answer;
    });
    wakeups.announce();
    return accepted;
  }

  return {
    accept(accountId, request) {
      return acceptOnce(idempotency, accountId, request.idempotency, {
        accept: (claim) => acceptClaimed(accountId, request, claim),
        decode: decodeAccepted,
      });
    },

    async get(accountId, jobId) {
      const row = await store.findJob(database.db, accountId, jobId);
      if (!row)
        throw new AppError(
          'JOB_NOT_FOUND',
          'No job with this id exists for this account; list your jobs with GET /v1/pdf/jobs.',
        );
      return toJob(row);
    },

    async list(accountId, filter) {
      const [rows, total] = await Promise.all([
        store.listJobs(database.db, accountId, filter),
        store.countJobs(database.db, accountId, filter.status),
      ]);
      return { jobs: rows.map(toJob), total };
    },

    async queueStats() {
      const now = Date.now();
      const [queued, oldest, webhooksPending, pendingByAccount] = await Promise.all([
        store.countQueuedJobs(database.db),
        store.oldestDueRunAt(database.db, now),
        countPendingDeliveries(database.db),
        store.pendingJobsByAccount(database.db, QUEUE_STATS_ACCOUNTS),
      ]);
      return {
        ...queued,
        oldestDueAgeMs: oldest === null ? 0 : Math.max(0, now - oldest),
        webhooksPending,
        pendingByAccount,
      };
    },

    async sweep(now = Date.now()) {
      if (deps.retentionDays === 0) return 0;
      const before = now - deps.retentionDays * DAY_MS;
      let total = 0;
      for (;;) {
        const deleted = await withTransaction(database.db, (trx) => store.deleteFinishedJobs(trx, before, SWEEP_BATCH));
        total += deleted;
        if (deleted < SWEEP_BATCH) return total;
      }
    },
  };
}

/** The stored answer of an accepted job's key: the create-async answer's own JSON, as it always was. */
function encodeAccepted(answer: AcceptedJob): unknown {
  return { job_id: answer.jobId, status: 'pending', credits_remaining: answer.creditsRemaining };
}

function decodeAccepted(stored: unknown): AcceptedJob {
  const answer = stored as { job_id: string; credits_remaining: number };
  return { jobId: answer.job_id, creditsRemaining: answer.credits_remaining };
}
