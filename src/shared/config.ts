/**
 * The one typed configuration, as every part of the service receives it: built by load-config.ts from
 * the settings (settings.ts, the only declaration of each `PRESSROOM_*` variable: its type, default,
 * bounds and doc) and the fixed values (named constants beside the code they bound). Frozen.
 *
 * This file declares types only and imports nothing, so any module may name its slice.
 */

export type Plan = 'free' | 'pro' | 'enterprise';
export const PLANS: readonly Plan[] = ['free', 'pro', 'enterprise'];

/** Requests allowed per window; `null` means unlimited. */
export interface RateLimitPolicy {
  perMinute: number | null;
  perDay: number | null;
}

/** A bad setting: start-up stops with this message, which names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Each field says where it comes from: a setting (`PRESSROOM_…`, documented in docs/settings.md) or a
 * fixed value (the constant named, beside the code it bounds, with its reason). A fixed bound is the
 * most it may be: a lower value of its former setting, still set, is kept (config/former-settings.ts).
 */
export interface Config {
  readonly http: {
    /** `PORT` */
    readonly port: number;
    /** `PRESSROOM_HOST` */
    readonly host: string;
    /** Base of download links, without a trailing slash. `PRESSROOM_PUBLIC_URL` */
    readonly publicUrl: string;
    /** Body limit of the generation routes (`/v1/pdf/create`, `create-async`, `/v1/image/create`, preview). `PRESSROOM_BODY_LIMIT_BYTES` */
    readonly bodyLimitBytes: number;
    /** Body limit of template create and update. Fixed: `TEMPLATE_BODY_LIMIT_BYTES` (http/body-limits.ts). */
    readonly templateBodyLimitBytes: number;
    /** Body limit of every other route. Fixed: `SMALL_BODY_LIMIT_BYTES` (http/body-limits.ts). */
    readonly smallBodyLimitBytes: number;
    /** Large JSON bodies are parsed on worker threads. Fixed: http/json-body/json-body-bounds.ts. */
    readonly jsonWorkers: {
      readonly thresholdBytes: number;
      readonly threads: number;
      readonly queueLimit: number;
      readonly accountLimit: number;
      readonly memoryMb: number;
    };
    /** Body limit of the PDF tools, from `pdfTools.maxInputBytes` (`pdfToolsBodyLimitBytes`, http/body-limits.ts). */
    readonly pdfToolsBodyLimitBytes: number;
    /** `PRESSROOM_ADMIN_TOKEN`; unset: the admin routes answer 404. */
    readonly adminToken: string | undefined;
    /** `PRESSROOM_METRICS_TOKEN`; unset: /metrics is public. */
    readonly metricsToken: string | undefined;
  };
  /** `PRESSROOM_DATA_DIR`, absolute. */
  readonly dataDir: string;
  readonly database: {
    /** `PRESSROOM_DATABASE_URL`; unset: SQLite at `sqlitePath`. */
    readonly url: string | undefined;
    readonly dialect: 'sqlite' | 'postgres';
    readonly sqlitePath: string;
    /** PostgreSQL connections per process. Fixed: `DATABASE_POOL_SIZE` (db/database.ts). */
    readonly poolSize: number;
  };
  /** `PRESSROOM_REDIS_URL`; unset: rate limits in memory. */
  readonly redisUrl: string | undefined;
  /** `PRESSROOM_SECRET_KEY`, else the key generated into `<dataDir>/secret.key`. */
  readonly secretKey: string;
  /** `PRESSROOM_ALLOW_PRIVATE_NETWORKS` */
  readonly allowPrivateNetworks: boolean;
  /** `PRESSROOM_LOG_LEVEL` */
  readonly logLevel: string;
  /**
   * The lease under which a process holds what it works on: a synchronous generation's reserved
   * credit and Idempotency-Key, and a claimed job. Renewed every third of it; when the process dies,
   * another takes over once it has run out. `PRESSROOM_LEASE_MS`
   */
  readonly leaseMs: number;
  readonly storage: {
    /** `PRESSROOM_STORAGE_URL` */
    readonly url: string;
    /** Derived from the data directory (load-config.ts `spoolDirOf`). */
    readonly spoolDir: string;
    /** Fixed: `SPOOL_ABOVE_BYTES` (pdf/spool.ts). */
    readonly spoolAboveBytes: number;
  };
  readonly rendering: {
    /** `PRESSROOM_CHROMIUM_PATH` */
    readonly chromiumPath: string;
    /** `PRESSROOM_RENDER_CONCURRENCY` */
    readonly concurrency: number;
    /** `PRESSROOM_RENDER_QUEUE_LIMIT` */
    readonly queueLimit: number;
    /** `PRESSROOM_RENDER_TIMEOUT_MS` */
    readonly timeoutMs: number;
    /** `PRESSROOM_ASYNC_RENDER_TIMEOUT_MS` */
    readonly asyncTimeoutMs: number;
    /** Fixed: `PRINT_MS_PER_PAGE` (rendering/render-limits.ts), the starting figure until the installation's own (print-rates.ts); 0 turns the check off. */
    readonly printMsPerPage: { readonly tagged: number; readonly untagged: number };
    /** `PRESSROOM_TEMPLATE_TIMEOUT_MS` */
    readonly templateTimeoutMs: number;
    /** Fixed: `TEMPLATE_OUTPUT_LIMIT_BYTES` (rendering/render-limits.ts). */
    readonly templateOutputLimitBytes: number;
    /** Fixed: `BROWSER_RECYCLE_AFTER` (rendering/render-limits.ts). */
    readonly recycleAfterRenders: number;
    /** `PRESSROOM_MAX_DOCUMENT_BYTES` */
    readonly maxDocumentBytes: number;
    /** `PRESSROOM_MAX_PAGES` */
    readonly maxPages: number;
    /** `PRESSROOM_MAX_IMAGE_PIXELS` */
    readonly maxImagePixels: number;
    /** `PRESSROOM_RENDERER_MEMORY_MB` */
    readonly rendererMemoryMb: number;
  };
  /** How render slots are shared between accounts (docs/rendering.md "Fair rendering"). Per process. */
  readonly renderFairness: {
    /** `PRESSROOM_RENDER_ACCOUNT_SLOTS` */
    readonly accountSlots: number;
    /** Fixed: `previewSlotsFor` (rendering/render-fairness.ts). */
    readonly previewSlots: number;
    /** Fixed: `accountQueueLimitFor` (rendering/render-fairness.ts). */
    readonly accountQueueLimit: number;
    /** Fixed: `PREVIEW_QUEUE_LIMIT` (rendering/render-fairness.ts). */
    readonly accountPreviewQueueLimit: number;
    /** Fixed: `FAILURE_BUDGET_SECONDS` (rendering/render-fairness.ts). */
    readonly failureBudgetSeconds: number;
    /** Fixed: `FAILURE_WINDOW_SECONDS` (rendering/render-fairness.ts). */
    readonly failureWindowSeconds: number;
  };
  /** `PRESSROOM_PLAN_{FREE,PRO,ENTERPRISE}_PER_{MINUTE,DAY}` */
  readonly plans: Readonly<Record<Plan, RateLimitPolicy>>;
  readonly jobs: {
    /** `PRESSROOM_WORKER_CONCURRENCY` */
    readonly workerConcurrency: number;
    /** `PRESSROOM_JOB_MAX_ATTEMPTS` */
    readonly maxAttempts: number;
    /** Fixed: `JOB_RETRY_BASE_DELAY_MS` (jobs/job-worker.ts). */
    readonly retryBaseDelayMs: number;
    /** `PRESSROOM_JOB_POLL_MS` */
    readonly pollIntervalMs: number;
    /** `PRESSROOM_SHUTDOWN_GRACE_MS` */
    readonly shutdownGraceMs: number;
    /** `PRESSROOM_JOB_RETENTION_DAYS`; 0 keeps finished jobs forever. */
    readonly retentionDays: number;
    /** `PRESSROOM_BATCH_MAX_ITEMS`: the most items one batch may have. */
    readonly batchMaxItems: number;
  };
  readonly webhooks: {
    /** Fixed: `WEBHOOK_TIMEOUT_MS` (webhooks/delivery-loop.ts). */
    readonly timeoutMs: number;
    /** `PRESSROOM_WEBHOOK_MAX_ATTEMPTS` */
    readonly maxAttempts: number;
    /** Fixed: `WEBHOOK_BASE_DELAY_MS` (webhooks/delivery-loop.ts). */
    readonly baseDelayMs: number;
    /** Fixed: `WEBHOOK_ACCOUNT_CONCURRENCY` (webhooks/delivery-loop.ts). */
    readonly accountConcurrency: number;
  };
  readonly preview: {
    /** `PRESSROOM_PREVIEW_PER_MINUTE` */
    readonly perMinute: number;
  };
  /** `POST /v1/pdf-tools/*` (docs/pdf-tools.md). */
  readonly pdfTools: {
    /** `PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES` */
    readonly maxInputBytes: number;
    /** Fixed: `PDF_TOOLS_MAX_PAGES` (pdf-tools/pdf-tool-bounds.ts). */
    readonly maxPages: number;
    /** Fixed: `PDF_TOOLS_MAX_MERGE_INPUTS` (pdf-tools/pdf-tool-bounds.ts). */
    readonly maxMergeInputs: number;
    /** Fixed: `PDF_TOOLS_FETCH_TIMEOUT_MS` (pdf-tools/pdf-tool-bounds.ts). */
    readonly fetchTimeoutMs: number;
    /** `PRESSROOM_PDF_TOOLS_TIMEOUT_MS` */
    readonly timeoutMs: number;
    /** Fixed: `qpdfConcurrencyFor` (pdf-tools/pdf-tool-bounds.ts). */
    readonly concurrency: number;
  };
  /** Signatures (docs/finishing.md). */
  readonly signing: {
    /** `PRESSROOM_TSA_URL`: the deployment's RFC 3161 time-stamp authority, or undefined. */
    readonly tsaUrl: string | undefined;
    /** Fixed: `SIGNING_TIMEOUT_MS` (signing/signing-bounds.ts): deadline of one task on a signing thread. */
    readonly timeoutMs: number;
    /** Fixed: `signingSlotsFor` (signing/signing-bounds.ts): signing tasks at once. */
    readonly slots: number;
  };
  /** The asset library (docs/assets.md). */
  readonly assets: {
    /** Fixed: `ASSET_MAX_BYTES` (assets/assets.ts). */
    readonly maxBytes: number;
    /** `PRESSROOM_ASSET_ACCOUNT_MAX_BYTES` */
    readonly accountMaxBytes: number;
    /** Fixed: `ASSET_CACHE_BYTES` (assets/assets.ts). */
    readonly cacheBytes: number;
  };
  /**
   * Remote images, fonts and stylesheets documents name (docs/assets.md "Remote resources"). Private
   * addresses are never reached, whatever `allowPrivateNetworks` says, except the hosts in `hosts`.
   * `enabled` and `hosts`: `PRESSROOM_REMOTE_RESOURCES`; the bounds are fixed
   * (rendering/resources/remote-bounds.ts).
   */
  readonly remoteResources: {
    readonly enabled: boolean;
    readonly hosts: readonly string[];
    readonly maxBytes: number;
    readonly timeoutMs: number;
    readonly maxPerDocument: number;
    readonly documentMaxBytes: number;
    readonly documentTimeoutMs: number;
    readonly cacheBytes: number;
  };
  /** `image_url`s of image modifications (docs/images.md). Fixed: documents/image-loader.ts. */
  readonly images: {
    readonly urlMaxBytes: number;
    readonly urlTimeoutMs: number;
  };
  readonly einvoice: {
    /** `PRESSROOM_EINVOICE_RULES`: use the official rules pack when installed, require it, or never use it. */
    readonly rules: EInvoiceRulesMode;
  };
}

/** `PRESSROOM_EINVOICE_RULES` (docs/einvoice.md "The official rules"). */
export type EInvoiceRulesMode = 'auto' | 'required' | 'off';
