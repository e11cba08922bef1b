/**
 * The job worker: claims jobs with a lease and runs them, `concurrency` at a time.
 *
 * Loop: claim as many jobs as there are free slots → run each → when a slot frees, a wake-up arrives or
 * the poll interval passes, claim again. While jobs run, a heartbeat renews their leases (every third of
 * the lease), so a lease only runs out when its worker is gone: then another worker re-claims the job.
 *
 * One attempt: template → `documents.produce` (render + deliver; reserved when accepted) → in ONE
 * transaction: mark completed (only if the lease is still ours), post the charge and enqueue the
 * `pdf.completed` webhook. A failure is retried with backoff when transient, else in ONE transaction:
 * mark failed, void the charge (exactly one REFUND, credits/charges.ts) and enqueue `pdf.failed`.
 *
 * Stop (SIGTERM): claim nothing more, let running jobs finish within the grace period, then hand the
 * rest back to the queue and abort their renders.
 */
import type { Charges } from '../credits/charges.js';
import type { DatabaseHandle } from '../db/database.js';
import { withTransaction, type Tx } from '../db/database.js';
import type { JobRow } from '../db/schema.js';
import type {
  Delivery,
  DocumentService,
  GenerationOptions,
  ProducedDocument as Produced,
} from '../documents/documents.js';
import { storedVerdict } from '../einvoice/einvoice.js';
import type { TemplateService } from '../templates/templates.js';
import { newInstanceId } from '../shared/ids.js';
import { withRequestId, type Logger } from '../shared/log.js';
import { completedPayload, failedPayload } from '../webhooks/webhook-payloads.js';
import type { WebhookQueue } from '../webhooks/webhook-queue.js';
import { classifyFailure, jobRetryDelayMs, type AttemptFailure } from './job-retry-policy.js';
import type { JobWakeups } from './job-wakeups.js';
import * as store from './jobs-store.js';
import { createClaimLoop } from '../shared/claim-loop.js';

/** What a job worker needs; `jobs` is the `config.jobs` slice. */
export interface JobWorkerOptions {
  database: DatabaseHandle;
  documents: DocumentService;
  templates: TemplateService;
  charges: Charges;
  webhooks: WebhookQueue;
  wakeups: JobWakeups;
  jobs: {
    workerConcurrency: number;
    leaseMs: number;
    maxAttempts: number;
    pollIntervalMs: number;
    retryBaseDelayMs: number;
  };
  logger: Logger;
  workerId?: string;
  /** A batch item's end, recorded in the transaction that ends it (src/batches/ counts and moves its batch). */
  batchItems?: BatchItemHook;
  /** Counts attempt outcomes (/metrics); optional so tests can leave it out. */
  metrics?: { jobAttempt(outcome: 'completed' | 'failed' | 'retry'): void };
}

/** What the batches need to hear from the worker: an item's end, inside its transaction, then the commit. */
export interface BatchItemHook {
  settled(trx: Tx, job: JobRow, outcome: 'completed' | 'failed'): Promise<void>;
  afterCommit(): void;
}

/** One process's job worker. */
export interface JobWorker {
  readonly workerId: string;
  start(): void;
  stop(graceMs: number): Promise<void>;
}

/** Creates a job worker; nothing is claimed before `start()`. */
export function createJobWorker(o: JobWorkerOptions): JobWorker {
  const { database, documents, templates, charges, webhooks, wakeups, jobs: cfg } = o;
  const workerId = o.workerId ?? newInstanceId();
  const logger = o.logger.child({ component: 'job-worker', workerId });
  // The jobs this worker runs, to abort them when it stops; the claim loop holds their promises.
  const running = new Map<string, AbortController>();
  let active = false;
  let releasing = false;
  let heartbeat: NodeJS.Timeout | undefined;

  function claim(limit: number): Promise<JobRow[]> {
    return store.claimJobs(database, { workerId, limit, now: Date.now(), leaseMs: cfg.leaseMs });
  }

  /** The checks that judged the job's e-invoice when it was accepted (`einvoice_checks`). */
  function einvoiceChecksOf(job: JobRow): string | null {
    return storedVerdict(job.einvoice_verdict)?.checks ?? null;
  }

  function resultOf({ delivery, warnings, accessibilityChecks }: Produced): store.JobResult {
    return {
      ...deliveredTo(delivery),
      ...(warnings && warnings.length > 0 ? { warnings } : {}),
      ...(accessibilityChecks ? { accessibilityChecks } : {}),
    };
  }

  function deliveredTo(delivery: Delivery): store.JobResult {
    if (delivery.kind === 's3')
      return {
        url: null,
        filename: delivery.filename,
        expiresAt: null,
        s3Bucket: delivery.bucket,
        s3Key: delivery.key,
      };
    if (delivery.kind === 'url')
      return {
        url: delivery.url,
        filename: delivery.filename,
        expiresAt: delivery.expiresAt,
        s3Bucket: null,
        s3Key: null,
        fileId: delivery.fileId,
      };
    throw new Error('async jobs deliver by url or s3 only');
  }

  async function complete(job: JobRow, produced: Produced): Promise<void> {
    const { renderMs } = produced;
    const result = resultOf(produced);
    const done = await withTransaction(database.db, async (trx) => {
      if (!(await store.completeJob(trx, job.id, workerId, result, Date.now()))) return false;
      await charges.post({ transactionRef: job.transaction_ref }, renderMs, trx);
      if (job.webhook_url) {
        await webhooks.enqueue(trx, {
          jobId: job.id,
          event: 'pdf.completed',
          url: job.webhook_url,
          sealedSecret: job.webhook_secret,
          payload: completedPayload(job.id, result, {
            einvoiceChecks: einvoiceChecksOf(job),
            accessibilityChecks: result.accessibilityChecks,
          }),
          requestId: job.request_id,
        });
      }
      if (job.batch_id !== null) await o.batchItems?.settled(trx, job, 'completed');
      return true;
    });
    if (done && job.batch_id !== null) o.batchItems?.afterCommit();
    if (!done) {
      // Another worker re-claimed the job after our lease ran out; it will complete it. Our file
      // expires unused.
      logger.warn({ jobId: job.id }, 'job lease lost before completion; the other claimer completes it');
      return;
    }
    if (job.webhook_url) webhooks.announce();
    o.metrics?.jobAttempt('completed');
    logger.info({ jobId: job.id, attempt: job.attempts, renderMs }, 'job completed');
  }

  async function fail(job: JobRow, failure: AttemptFailure): Promise<void> {
    const done = await withTransaction(database.db, async (trx) => {
      if (!(await store.failJob(trx, job.id, workerId, failure, Date.now()))) return false;
      await charges.void({ transactionRef: job.transaction_ref, accountId: job.account_id }, trx);
      if (job.webhook_url) {
        await webhooks.enqueue(trx, {
          jobId: job.id,
          event: 'pdf.failed',
          url: job.webhook_url,
          sealedSecret: job.webhook_secret,
          payload: failedPayload(job.id, failure, { einvoiceChecks: einvoiceChecksOf(job) }),
          requestId: job.request_id,
        });
      }
      if (job.batch_id !== null) await o.batchItems?.settled(trx, job, 'failed');
      return true;
    });
    if (done && job.batch_id !== null) o.batchItems?.afterCommit();
    if (!done) return void logger.warn({ jobId: job.id }, 'job lease lost before the failure was recorded');
    if (job.webhook_url) webhooks.announce();
    o.metrics?.jobAttempt('failed');
    logger.info(
      { jobId: job.id, attempt: job.attempts, code: failure.code, detail: failure.detail },
      'job failed; credit refunded',
    );
  }

  async function retryOrFail(job: JobRow, failure: AttemptFailure): Promise<void> {
    if (!failure.transient) return fail(job, failure);
    if (job.attempts >= Math.min(cfg.maxAttempts, failure.maxAttempts ?? Infinity)) {
      return fail(job, { ...failure, message: `Gave up after ${job.attempts} attempts: ${failure.message}` });
    }
    const delay = jobRetryDelayMs(job.attempts, cfg.retryBaseDelayMs);
    const now = Date.now();
    const kept = await store.retryJob(
      database.db,
      job.id,
      workerId,
      { runAt: now + delay, lastError: failure.detail },
      now,
    );
    if (kept) o.metrics?.jobAttempt('retry');
    logger.info(
      { jobId: job.id, attempt: job.attempts, code: failure.code, detail: failure.detail, retryInMs: delay, kept },
      'job attempt failed; will retry',
    );
    if (kept) setTimeout(kick, delay + 5).unref();
  }

  async function run(job: JobRow, signal: AbortSignal): Promise<void> {
    // Every earlier claim ended with its worker gone (attempts counts claims): stop re-running a job
    // that keeps taking its worker down.
    if (job.attempts > cfg.maxAttempts) {
      const message = `The job was interrupted ${job.attempts - 1} times (its worker stopped); giving up.`;
      return fail(job, { transient: false, code: 'JOB_INTERRUPTED', message, detail: message });
    }
    try {
      // A job accepted for a version renders that immutable snapshot, whatever the draft became since.
      const template = await templates.resolve(
        job.account_id,
        job.template_id,
        job.version_number === null ? null : Number(job.version_number),
      );
      const options = JSON.parse(job.options) as GenerationOptions;
      const data = JSON.parse(job.data) as Record<string, unknown>;
      // The e-invoice was judged when the job was accepted; its warnings go with the document.
      const einvoice = storedVerdict(job.einvoice_verdict);
      const produced = await documents.produce({
        accountId: job.account_id,
        template,
        data,
        options,
        signal,
        mode: 'async',
        einvoice,
      });
      await complete(job, produced);
    } catch (error) {
      if (releasing && signal.aborted) return; // handed back to the queue by stop()
      await retryOrFail(job, classifyFailure(error));
    }
  }

  function runJob(job: JobRow): Promise<void> {
    const controller = new AbortController();
    running.set(job.id, controller);
    // Every log line of this job (renderer and ledger included) carries the request that created it.
    return withRequestId(job.request_id, () =>
      run(job, controller.signal)
        .catch((error) =>
          logger.error(
            { err: error, jobId: job.id },
            'could not record a job outcome; its lease will run out and it is retried',
          ),
        )
        .finally(() => running.delete(job.id)),
    );
  }

  const loop = createClaimLoop({
    what: 'jobs',
    slots: cfg.workerConcurrency,
    claim,
    run: runJob,
    wakeups,
    pollIntervalMs: cfg.pollIntervalMs,
    logger,
  });
  const kick = () => loop.kick();

  return {
    workerId,
    start() {
      if (active) return;
      active = true;
      heartbeat = setInterval(
        () => {
          if (running.size === 0) return;
          store
            .renewLeases(database.db, workerId, Date.now() + cfg.leaseMs)
            .catch((error) => logger.warn({ err: error }, 'could not renew job leases'));
        },
        Math.max(100, Math.floor(cfg.leaseMs / 3)),
      );
      heartbeat.unref();
      loop.start();
      logger.info({ concurrency: cfg.workerConcurrency, dialect: database.dialect }, 'job worker started');
    },
    async stop(graceMs) {
      if (!active) return;
      active = false;
      if (!(await loop.stop(graceMs))) {
        releasing = true;
        const released = await store.releaseJobs(database.db, workerId, Date.now()).catch((error) => {
          logger.error({ err: error }, 'could not release unfinished jobs; their leases will run out');
          return 0;
        });
        for (const controller of running.values()) controller.abort(new Error('worker stopping'));
        await loop.stop(5000);
        logger.info({ released }, 'released unfinished jobs to the queue');
      }
      clearInterval(heartbeat);
    },
  };
}
