/**
 * The composition root: opens every long-lived resource once (database, Redis, browser, storage) and
 * returns the services with one `close()` that releases them in reverse order.
 */
import { Redis } from 'ioredis';
import type { Config } from './shared/config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { createAccountService, type AccountService } from './accounts/accounts.js';
import { createAccessTokenSigner } from './accounts/credentials.js';
import { createCreditLedger, type CreditLedger } from './credits/ledger.js';
import { createCharges, type Charges } from './credits/charges.js';
import { newInstanceId } from './shared/ids.js';
import { closeLayerListing } from './templates/layers/layer-listing.js';
import { createTemplateService, type TemplateService } from './templates/templates.js';
import { createTemplateThreads } from './templates/template-threads.js';
import { createAssetUseSource } from './templates/template-asset-uses.js';
import { createRateLimiter, type RateLimiter } from './rate-limits/rate-limiter.js';
import { createPdfRenderer, type PdfRenderer } from './rendering/pdf-renderer.js';
import type { BlobStore } from './storage/blob-store.js';
import { createBlobStore } from './storage/open-blob-store.js';
import { Spool } from './pdf/spool.js';
import { createFileService, type FileService } from './files/files.js';
import { createAssetService, type AssetService } from './assets/assets.js';
import { createRemoteResourceFetcher } from './rendering/resources/remote-fetcher.js';
import { createIdempotencyService, type IdempotencyService } from './idempotency/idempotency.js';
import { createDocumentService, type DocumentService } from './documents/documents.js';
import { createChargedRunner } from './credits/paid-request.js';
import { createPdfToolService, type PdfToolService } from './pdf-tools/pdf-tools.js';
import { createCertificateService, type CertificateService } from './signing/certificates.js';
import { createSigning } from './signing/sign.js';
import { createSigningPool } from './signing/signing-pool.js';
import { TSA_TIMEOUT_MS } from './signing/signing-bounds.js';
import { createQpdf } from './pdf/qpdf.js';
import { createFormFiles } from './pdf-forms/form-files.js';
import { formPoolStats } from './pdf-forms/form-thread.js';
import { deriveKey } from './shared/crypto.js';
import { createGuardedDispatcher } from './net/guarded-dispatcher.js';
import { createJobWakeups } from './jobs/job-wakeups.js';
import { createJobService, type JobService } from './jobs/jobs.js';
import { createJobWorker, type JobWorker } from './jobs/job-worker.js';
import { createBatchService, type BatchService } from './batches/batches.js';
import { createBatchAssembler } from './batches/batch-assembly.js';
import type { ClaimLoop } from './shared/claim-loop.js';
import { createBatchSettler } from './batches/batch-settling.js';
import { createWebhookQueue, type WebhookQueue } from './webhooks/webhook-queue.js';
import { createDeliveryLoop, type DeliveryLoop } from './webhooks/delivery-loop.js';
import { createDeliverer } from './files/delivery.js';
import { createGuardedAgents } from './net/guarded-agents.js';
import { createImageLoader } from './documents/image-loader.js';
import { createS3IntegrationService, type S3IntegrationService } from './customer-buckets/s3-integration.js';
import type { Logger } from './shared/log.js';
import { createMetrics, type Metrics } from './ops/metrics.js';
import { compactionCounter, instrumentLedger, instrumentRenderer } from './ops/instrument.js';
import { createFinishing } from './finishing/finishing.js';
import { createTextLayout } from './finishing/requested/text-layout.js';
import { createReadinessCheck } from './ops/readiness.js';
import { closeXmlChecks, xmlCheckPoolStats } from './einvoice/xmllint/xml-schema-check.js';
import { createEInvoiceRules, type EInvoiceRules } from './einvoice/rules/official-checks.js';
import { createEInvoiceValidator, type EInvoiceValidator } from './einvoice/validate.js';
import { ghostscriptPoolStats } from './pdf/ghostscript.js';
import { pageImagePoolStats } from './pdf/page-image.js';
import { startSweep } from './ops/sweep.js';

export type Role = 'all' | 'api' | 'worker';

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly database: DatabaseHandle;
  readonly accounts: AccountService;
  readonly ledger: CreditLedger;
  /** Charging for documents: reserve, post, void, and recovery of reservations whose process died. */
  readonly charges: Charges;
  readonly templates: TemplateService;
  readonly rateLimiter: RateLimiter;
  readonly renderer: PdfRenderer;
  readonly blobs: BlobStore;
  readonly files: FileService;
  /** The asset library: logos, fonts, stylesheets per account (docs/assets.md). */
  readonly assets: AssetService;
  readonly idempotency: IdempotencyService;
  readonly documents: DocumentService;
  /** The official e-invoice rules pack and its validation threads (docs/einvoice.md "The official rules"). */
  readonly einvoiceRules: EInvoiceRules;
  /** POST /v1/einvoice/validate (einvoice/validate.ts). */
  readonly einvoiceValidator: EInvoiceValidator;
  /** Merge, extract pages, rotate (qpdf), charged like documents. */
  readonly pdfTools: PdfToolService;
  readonly s3: S3IntegrationService;
  readonly certificates: CertificateService;
  readonly jobs: JobService;
  readonly batches: BatchService;
  readonly webhooks: WebhookQueue;
  /** This process's Prometheus registry and counters (/metrics). */
  readonly metrics: Metrics;
  /** Starts the job worker and the webhook delivery loop in this process (roles `all` and `worker`). */
  startWorkers(): void;
  /** Stops claiming; in-flight jobs may finish within `config.jobs.shutdownGraceMs`, the rest are released. */
  stopWorkers(): Promise<void>;
  /** Each dependency's state, for /readyz (see ops/readiness.ts). */
  readiness(): Promise<Record<string, 'ok' | string>>;
  close(): Promise<void>;
}

export interface ServiceOptions {
  logger: Logger;
  role?: Role;
  /** Tests pass a PostgreSQL schema of their own. */
  pgSchema?: string;
}

export async function createServices(config: Config, options: ServiceOptions): Promise<Services> {
  const { logger } = options;
  const releasers: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const release of releasers.reverse()) {
      try {
        await release();
      } catch (error) {
        logger.warn({ err: error }, 'error while closing a resource');
      }
    }
    releasers.length = 0;
  };

  try {
    const database = await openDatabase({
      dialect: config.database.dialect,
      url: config.database.url,
      sqlitePath: config.database.sqlitePath,
      poolSize: config.database.poolSize,
      pgSchema: options.pgSchema,
    });
    releasers.push(() => database.close());

    let redis: Redis | undefined;
    if (config.redisUrl) {
      redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: false });
      redis.on('error', (error) => logger.warn({ err: error }, 'redis error'));
      const client = redis;
      releasers.push(() => void client.disconnect());
    }

    const metrics = createMetrics();
    const ledger = instrumentLedger(createCreditLedger(database.db), metrics);
    const accounts = createAccountService(database.db, ledger, createAccessTokenSigner(config.secretKey));
    // The thread that lists templates' layers (templates/layers/layer-listing.ts), started by the first listing.
    releasers.push(() => closeLayerListing());
    const rateLimiter = createRateLimiter(config.plans, redis);

    const blobs = createBlobStore(config.storage.url);
    releasers.push(() => blobs.close());
    // The asset library (issue 13) and the remote images, fonts and stylesheets documents load.
    const assets = createAssetService({
      db: database.db,
      dialect: database.dialect,
      blobs,
      limits: config.assets,
      uses: createAssetUseSource(database.db),
      logger: logger.child({ component: 'assets' }),
    });
    // Versions pin asset revisions when published and release them when deleted (issue 50).
    // Long templates are compiled and read on their own threads (templates/template-threads.ts).
    const templateThreads = createTemplateThreads();
    releasers.push(() => templateThreads.close());
    // qpdf: the PDF tools' engine, `protect`'s encryption after printing, and the check of a form template's PDF.
    const qpdf = createQpdf({ timeoutMs: config.pdfTools.timeoutMs, concurrency: config.pdfTools.concurrency });
    // Form templates' PDFs (issue 54): checked by qpdf and on the form threads, stored beside the assets.
    const formFiles = createFormFiles({
      db: database.db,
      blobs,
      qpdf,
      maxInputBytes: config.pdfTools.maxInputBytes,
      maxPages: config.pdfTools.maxPages,
      logger: logger.child({ component: 'pdf-forms' }),
    });
    const templates = createTemplateService(database.db, {
      dialect: database.dialect,
      assets,
      threads: templateThreads,
      forms: formFiles,
    });
    const remoteResources = createRemoteResourceFetcher({
      ...config.remoteResources,
      logger: logger.child({ component: 'remote-resources' }),
      onOutcome: (outcome) => metrics.remoteResource(outcome),
    });
    releasers.push(() => remoteResources.close());
    // The browser starts on first use (admin commands never launch it); `serve` warms it up.
    const renderer = instrumentRenderer(
      createPdfRenderer(config.rendering, logger.child({ component: 'renderer' }), {
        fairness: config.renderFairness,
        assets: assets.readForRender,
        remoteResources,
        remoteBounds: config.remoteResources,
        prepareTemplate: templateThreads.prepare,
      }),
      metrics,
    );
    releasers.push(() => renderer.close());
    // The e-invoice XML checks' threads (einvoice/xmllint/xmllint-pool.ts), started by the first check.
    releasers.push(() => closeXmlChecks());
    // The official e-invoice rules (einvoice/rules/): the pack under the data directory, read per check; its threads start with the first.
    const einvoiceRules = createEInvoiceRules({ dataDir: config.dataDir, mode: config.einvoice.rules });
    releasers.push(() => einvoiceRules.close());
    const files = createFileService({
      db: database.db,
      blobs,
      publicUrl: config.http.publicUrl,
      secretKey: config.secretKey,
      logger,
    });
    // This process, as recorded on the reservations and idempotency keys it holds.
    const instanceId = newInstanceId();
    const charges = createCharges({
      db: database.db,
      ledger,
      instanceId,
      leaseMs: config.leaseMs,
      logger: logger.child({ component: 'charges' }),
    });
    const idempotency = createIdempotencyService(database.db, { instanceId, leaseMs: config.leaseMs });
    // One pair of guarded agents for every customer endpoint: keep-alive sockets are shared, and
    // every connection is resolved, checked and pinned.
    const guardedAgents = createGuardedAgents({ allowPrivateNetworks: config.allowPrivateNetworks });
    releasers.push(() => guardedAgents.destroy());
    const s3 = createS3IntegrationService({
      db: database.db,
      secretKey: config.secretKey,
      allowPrivateNetworks: config.allowPrivateNetworks,
      agents: guardedAgents,
      logger,
    });
    // One charging flow (key → reserve → produce → post | void) for every paid answer given at once.
    const charged = createChargedRunner({ db: database.db, charges, idempotency, files, logger });
    // Image layers' image_url downloads: every connection resolved, checked and pinned (net/).
    const imageDispatcher = createGuardedDispatcher({ allowPrivateNetworks: config.allowPrivateNetworks });
    releasers.push(() => imageDispatcher.close());
    const loadImages = createImageLoader({
      dispatcher: imageDispatcher,
      allowPrivateNetworks: config.allowPrivateNetworks,
      maxBytes: config.images.urlMaxBytes,
      timeoutMs: config.images.urlTimeoutMs,
    });
    // Signing (issue 39): certificates sealed per account; time-stamp requests through their own guarded dispatcher.
    // The signing pool: signatures (paid), certificate uploads' checks and verifications (free), each under a deadline.
    const signingPool = createSigningPool({
      slots: config.signing.slots,
      timeoutMs: config.signing.timeoutMs,
      maxWaitMs: config.pdfTools.timeoutMs,
    });
    releasers.push(() => signingPool.close());
    const certificates = createCertificateService({
      db: database.db,
      secretKey: config.secretKey,
      logger: logger.child({ component: 'certificates' }),
      pool: signingPool,
    });
    const tsaDispatcher = createGuardedDispatcher(
      { allowPrivateNetworks: config.allowPrivateNetworks },
      { connectTimeoutMs: TSA_TIMEOUT_MS, headersTimeoutMs: TSA_TIMEOUT_MS, bodyTimeoutMs: TSA_TIMEOUT_MS },
    );
    releasers.push(() => tsaDispatcher.close());
    const signing = createSigning({
      certificates,
      tsaUrl: config.signing.tsaUrl,
      allowPrivateNetworks: config.allowPrivateNetworks,
      dispatcher: tsaDispatcher,
      pool: signingPool,
    });
    // Long PDFs wait on disk between printing and delivery, not in this process's memory.
    const spool = { spool: await Spool.open(config.storage.spoolDir), aboveBytes: config.storage.spoolAboveBytes };
    // After printing: stamp, document info, PDF/A, compaction (one compaction thread per render slot at most).
    const finishing = createFinishing({
      threads: config.rendering.concurrency,
      spool: spool.spool,
      signing,
      logger,
      onCompaction: compactionCounter(metrics),
      qpdf,
    });
    releasers.push(() => finishing.close());
    // A watermark's assets, and Chromium's layout of text in scripts that need shaping.
    const layOutText = createTextLayout((request) => renderer.render(request));
    const finishingSecrets = {
      readAsset: assets.readForRender,
      layOutText,
      sealKey: deriveKey(config.secretKey, 'protect-passwords'),
    };
    const delivery = createDeliverer({ files, customerStorage: s3 });
    const documents = createDocumentService({
      templates,
      charged,
      renderer,
      finishing,
      signing,
      delivery,
      loadImages,
      spool,
      logger,
      einvoiceRules,
      formFiles,
      ...finishingSecrets,
    });
    // The PDF tools download `pdf_url`s through their own guarded dispatcher (resolve, refuse private, pin).
    const pdfToolsDispatcher = createGuardedDispatcher(
      { allowPrivateNetworks: config.allowPrivateNetworks },
      {
        connectTimeoutMs: config.pdfTools.fetchTimeoutMs,
        headersTimeoutMs: config.pdfTools.fetchTimeoutMs,
        bodyTimeoutMs: config.pdfTools.fetchTimeoutMs,
      },
    );
    releasers.push(() => pdfToolsDispatcher.close());
    // POST /v1/einvoice/validate: free work in the qpdf, xmllint and validation pools; URLs through the PDF tools' guarded dispatcher.
    const einvoiceValidator = createEInvoiceValidator({
      rules: einvoiceRules,
      qpdf,
      dispatcher: pdfToolsDispatcher,
      allowPrivateNetworks: config.allowPrivateNetworks,
      maxInputBytes: config.pdfTools.maxInputBytes,
      fetchTimeoutMs: config.pdfTools.fetchTimeoutMs,
    });
    const pdfTools = createPdfToolService({
      charged,
      files,
      qpdf,
      signing,
      readAsset: assets.readForRender,
      layOutText,
      limits: { ...config.pdfTools, allowPrivateNetworks: config.allowPrivateNetworks, dispatcher: pdfToolsDispatcher },
      logger: logger.child({ component: 'pdf-tools' }),
    });
    const wakeups = await createJobWakeups(database, logger);
    releasers.push(() => wakeups.close());
    const webhooks = createWebhookQueue(config.secretKey);
    const jobs = createJobService({
      database,
      documents,
      charges,
      idempotency,
      webhooks,
      wakeups,
      allowPrivateNetworks: config.allowPrivateNetworks,
      retentionDays: config.jobs.retentionDays,
    });
    // The job worker and the webhook delivery loop: started by roles `all` and `worker`, under this process's id.
    const workerId = instanceId;
    const batches = createBatchService({
      database,
      documents,
      templates,
      charges,
      idempotency,
      webhooks,
      wakeups,
      allowPrivateNetworks: config.allowPrivateNetworks,
      maxItems: config.jobs.batchMaxItems,
      instanceId,
      leaseMs: config.leaseMs,
    });
    const jobWorker = createJobWorker({
      database,
      documents,
      templates,
      charges,
      webhooks,
      wakeups,
      jobs: { ...config.jobs, leaseMs: config.leaseMs },
      workerId,
      logger,
      metrics,
      batchItems: batches.itemHook,
    });
    const assembler = createBatchAssembler({
      database,
      files,
      delivery,
      qpdf,
      webhooks,
      wakeups,
      leaseMs: config.leaseMs,
      pollIntervalMs: config.jobs.pollIntervalMs,
      logger,
      workerId,
    });
    const settler = createBatchSettler({
      database,
      charges,
      webhooks,
      wakeups,
      holder: workerId,
      leaseMs: config.leaseMs,
      pollIntervalMs: config.jobs.pollIntervalMs,
      logger,
    });
    const deliveryLoop = createDeliveryLoop({
      database,
      queue: webhooks,
      workerId,
      ...config.webhooks,
      pollIntervalMs: config.jobs.pollIntervalMs,
      allowPrivateNetworks: config.allowPrivateNetworks,
      logger: logger.child({ component: 'webhooks', workerId }),
      metrics,
    });
    const workers = jobsThenDeliveries(
      { jobWorker, batchLoops: [assembler, settler], deliveryLoop },
      config.jobs.shutdownGraceMs,
    );
    // Registered after the renderer and the database, so close() stops the workers before either goes.
    releasers.push(() => workers.stop());

    releasers.push(startSweep({ files, idempotency, jobs, spool: spool.spool }, logger));

    // Leases: renew what this process holds, and void what a dead process left (at start, then every
    // third of a lease), so a crash in the middle of a generation costs nobody a credit.
    const keepLeases = () =>
      Promise.all([charges.renewHeld(), idempotency.renewHeld()])
        .then(() => charges.recoverExpired())
        .catch((error) => logger.warn({ err: error }, 'could not renew or recover request leases; will retry'));
    await keepLeases();
    const leases = setInterval(keepLeases, Math.max(100, Math.floor(config.leaseMs / 3)));
    leases.unref();
    releasers.push(() => clearInterval(leases));

    const readiness = createReadinessCheck({
      database,
      blobs,
      renderer,
      redis,
      einvoiceRules,
      logger: logger.child({ component: 'readiness' }),
    });
    const redisClient = redis;
    metrics.collectFrom({
      queueStats: async () => ({ ...(await jobs.queueStats()), reservationsPending: await charges.pendingCount() }),
      rendererStats: () => renderer.stats(),
      // Every pool of heavy work of this process, each shared fairly between accounts (scheduling/).
      pools: () => [
        ...renderer.stats().pools,
        finishing.stats(),
        qpdf.stats(),
        signing.stats(),
        ghostscriptPoolStats(),
        pageImagePoolStats(),
        xmlCheckPoolStats(),
        einvoiceRules.stats(),
        templateThreads.stats(),
        formPoolStats(),
      ],
      redisReady: redisClient ? () => redisClient.status === 'ready' : undefined,
    });

    return {
      config,
      logger,
      database,
      accounts,
      ledger,
      charges,
      templates,
      rateLimiter,
      renderer,
      blobs,
      files,
      assets,
      idempotency,
      documents,
      einvoiceRules,
      einvoiceValidator,
      pdfTools,
      s3,
      certificates,
      jobs,
      batches,
      webhooks,
      metrics,
      startWorkers: () => workers.start(),
      stopWorkers: () => workers.stop(),
      readiness,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Runs the job worker, the batch loops (assembly, settling) and the delivery loop as one for startWorkers()/stopWorkers().
 * All start together. A stop stops the jobs first, then the batch loops (all may enqueue webhooks that
 * the delivery loop may still send), then the deliveries in what is left of the grace. Concurrent
 * stops (SIGTERM, then close()) share one; a stop before any start does nothing; a stopped set does
 * not start again.
 */
function jobsThenDeliveries(
  w: { jobWorker: JobWorker; batchLoops: ClaimLoop[]; deliveryLoop: DeliveryLoop },
  graceMs: number,
): { start(): void; stop(): Promise<void> } {
  let started = false;
  let stopping: Promise<void> | undefined;
  return {
    start() {
      if (started) return;
      started = true;
      w.jobWorker.start();
      for (const loop of w.batchLoops) loop.start();
      w.deliveryLoop.start();
    },
    stop() {
      if (!started) return Promise.resolve();
      stopping ??= (async () => {
        const deadline = Date.now() + graceMs;
        await w.jobWorker.stop(graceMs);
        await Promise.all(w.batchLoops.map((loop) => loop.stop()));
        await w.deliveryLoop.stop(Math.max(0, deadline - Date.now()));
      })();
      return stopping;
    },
  };
}
