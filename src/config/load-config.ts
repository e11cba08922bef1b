/**
 * Builds the typed, frozen `Config` from the settings (settings.ts, parsed from the environment) and
 * the fixed values (named constants beside the code they bound, referenced here, never restated).
 * Former settings still set carry over, keep a stricter bound, or are reported (read-former-settings.ts).
 * The only reader of `process.env` in the service.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ASSET_CACHE_BYTES, ASSET_MAX_BYTES } from '../assets/assets.js';
import { DATABASE_POOL_SIZE } from '../db/database.js';
import { IMAGE_URL_MAX_BYTES, IMAGE_URL_TIMEOUT_MS } from '../documents/image-url-bounds.js';
import { pdfToolsBodyLimitBytes, SMALL_BODY_LIMIT_BYTES, TEMPLATE_BODY_LIMIT_BYTES } from '../http/body-limits.js';
import {
  JSON_PARSE_ACCOUNT_LIMIT,
  JSON_PARSE_QUEUE_LIMIT,
  JSON_PARSE_THRESHOLD_BYTES,
  jsonParseMemoryMbFor,
  jsonParseThreadsFor,
} from '../http/json-body/json-body-bounds.js';
import { JOB_RETRY_BASE_DELAY_MS } from '../jobs/job-retry-policy.js';
import {
  PDF_TOOLS_FETCH_TIMEOUT_MS,
  PDF_TOOLS_MAX_MERGE_INPUTS,
  PDF_TOOLS_MAX_PAGES,
  qpdfConcurrencyFor,
} from '../pdf-tools/pdf-tool-bounds.js';
import {
  accountQueueLimitFor,
  FAILURE_BUDGET_SECONDS,
  FAILURE_WINDOW_SECONDS,
  PREVIEW_QUEUE_LIMIT,
  previewSlotsFor,
} from '../rendering/render-fairness.js';
import { BROWSER_RECYCLE_AFTER, PRINT_MS_PER_PAGE, TEMPLATE_OUTPUT_LIMIT_BYTES } from '../rendering/render-limits.js';
import {
  REMOTE_RESOURCE_CACHE_BYTES,
  REMOTE_RESOURCE_DOCUMENT_MAX_BYTES,
  REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS,
  REMOTE_RESOURCE_MAX_BYTES,
  REMOTE_RESOURCE_TIMEOUT_MS,
  REMOTE_RESOURCES_PER_DOCUMENT,
} from '../rendering/resources/remote-bounds.js';
import { SPOOL_ABOVE_BYTES } from '../pdf/spool.js';
import { SIGNING_TIMEOUT_MS, signingSlotsFor } from '../signing/signing-bounds.js';
import {
  WEBHOOK_ACCOUNT_CONCURRENCY,
  WEBHOOK_BASE_DELAY_MS,
  WEBHOOK_TIMEOUT_MS,
} from '../webhooks/webhook-schedule.js';
import { ConfigError, type Config } from '../shared/config.js';
import { unknownVariablesWarning } from './ignored-variables.js';
import { carryOverFormerSettings, keepStricterBounds } from './read-former-settings.js';
import { currentMachine, parseSettings, type Machine } from './settings.js';

export { ConfigError, PLANS, type Config, type Plan, type RateLimitPolicy } from '../shared/config.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Every field optional, at any depth. */
export type DeepPartial<T> = {
  [K in keyof T]?: T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K];
};

/** What `loadConfig` may do, and what tests may set in code. */
export interface LoadOptions {
  /**
   * Create the data directory (and the master key in it) when it does not exist. `serve` does; the
   * admin commands do only with `--init`: run from the wrong directory they would otherwise create a
   * second, empty installation and print keys the running server rejects.
   */
  readonly createDataDir?: boolean;
  /**
   * Tests only: values set in code over the loaded ones, chiefly the fixed ones (short polls, small
   * bounds) that no variable sets. Applied last, as given: nothing is derived again from a tuned value.
   */
  readonly tuning?: DeepPartial<Config>;
  /** The machine defaults are sized to; this one unless given. */
  readonly machine?: Machine;
  /**
   * Told each line start-up should warn about: a former setting still set (what became of it) and
   * variables that are not settings. `serve` logs them; the admin commands print them on stderr.
   */
  readonly onWarning?: (message: string) => void;
}

export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  const machine = options.machine ?? currentMachine();
  const carried = carryOverFormerSettings(env);
  const s = parseSettings(carried.env, machine);
  const dataDir = s.PRESSROOM_DATA_DIR;
  const usesDataDir = !s.PRESSROOM_DATABASE_URL || !s.PRESSROOM_SECRET_KEY || !env.PRESSROOM_STORAGE_URL?.trim();
  if (options.createDataDir === false && usesDataDir && !existsSync(dataDir)) {
    throw new ConfigError(
      `there is no data directory at ${dataDir} (PRESSROOM_DATA_DIR, default ./data). ` +
        'Run the command where the server runs or set PRESSROOM_DATA_DIR to its data directory; pass --init to create a new one.',
    );
  }
  const concurrency = s.PRESSROOM_RENDER_CONCURRENCY;
  const config: Config = {
    http: {
      port: s.PORT,
      host: s.PRESSROOM_HOST,
      publicUrl: s.PRESSROOM_PUBLIC_URL!.replace(/\/+$/, ''),
      bodyLimitBytes: s.PRESSROOM_BODY_LIMIT_BYTES,
      templateBodyLimitBytes: TEMPLATE_BODY_LIMIT_BYTES,
      smallBodyLimitBytes: SMALL_BODY_LIMIT_BYTES,
      jsonWorkers: {
        thresholdBytes: JSON_PARSE_THRESHOLD_BYTES,
        threads: jsonParseThreadsFor(machine.cores),
        queueLimit: JSON_PARSE_QUEUE_LIMIT,
        accountLimit: JSON_PARSE_ACCOUNT_LIMIT,
        memoryMb: jsonParseMemoryMbFor(s.PRESSROOM_BODY_LIMIT_BYTES),
      },
      pdfToolsBodyLimitBytes: pdfToolsBodyLimitBytes(s.PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES),
      adminToken: s.PRESSROOM_ADMIN_TOKEN,
      metricsToken: s.PRESSROOM_METRICS_TOKEN,
    },
    dataDir,
    database: {
      url: s.PRESSROOM_DATABASE_URL,
      dialect: s.PRESSROOM_DATABASE_URL ? 'postgres' : 'sqlite',
      sqlitePath: join(dataDir, 'pressroom.db'),
      poolSize: DATABASE_POOL_SIZE,
    },
    redisUrl: s.PRESSROOM_REDIS_URL,
    secretKey: s.PRESSROOM_SECRET_KEY ?? readOrCreateSecretKey(dataDir),
    allowPrivateNetworks: s.PRESSROOM_ALLOW_PRIVATE_NETWORKS,
    logLevel: s.PRESSROOM_LOG_LEVEL,
    leaseMs: s.PRESSROOM_LEASE_MS,
    storage: {
      url: s.PRESSROOM_STORAGE_URL!,
      spoolDir: spoolDirOf(dataDir, usesDataDir),
      spoolAboveBytes: SPOOL_ABOVE_BYTES,
    },
    rendering: {
      chromiumPath: s.PRESSROOM_CHROMIUM_PATH,
      concurrency,
      queueLimit: s.PRESSROOM_RENDER_QUEUE_LIMIT,
      timeoutMs: s.PRESSROOM_RENDER_TIMEOUT_MS,
      asyncTimeoutMs: s.PRESSROOM_ASYNC_RENDER_TIMEOUT_MS,
      printMsPerPage: { ...PRINT_MS_PER_PAGE },
      templateTimeoutMs: s.PRESSROOM_TEMPLATE_TIMEOUT_MS,
      templateOutputLimitBytes: TEMPLATE_OUTPUT_LIMIT_BYTES,
      recycleAfterRenders: BROWSER_RECYCLE_AFTER,
      maxDocumentBytes: s.PRESSROOM_MAX_DOCUMENT_BYTES,
      maxPages: s.PRESSROOM_MAX_PAGES,
      maxImagePixels: s.PRESSROOM_MAX_IMAGE_PIXELS,
      rendererMemoryMb: s.PRESSROOM_RENDERER_MEMORY_MB,
    },
    renderFairness: {
      accountSlots: s.PRESSROOM_RENDER_ACCOUNT_SLOTS,
      previewSlots: previewSlotsFor(concurrency),
      accountQueueLimit: accountQueueLimitFor(s.PRESSROOM_RENDER_QUEUE_LIMIT),
      accountPreviewQueueLimit: PREVIEW_QUEUE_LIMIT,
      failureBudgetSeconds: FAILURE_BUDGET_SECONDS,
      failureWindowSeconds: FAILURE_WINDOW_SECONDS,
    },
    plans: {
      free: { perMinute: s.PRESSROOM_PLAN_FREE_PER_MINUTE, perDay: s.PRESSROOM_PLAN_FREE_PER_DAY },
      pro: { perMinute: s.PRESSROOM_PLAN_PRO_PER_MINUTE, perDay: s.PRESSROOM_PLAN_PRO_PER_DAY },
      enterprise: { perMinute: s.PRESSROOM_PLAN_ENTERPRISE_PER_MINUTE, perDay: s.PRESSROOM_PLAN_ENTERPRISE_PER_DAY },
    },
    jobs: {
      workerConcurrency: s.PRESSROOM_WORKER_CONCURRENCY,
      maxAttempts: s.PRESSROOM_JOB_MAX_ATTEMPTS,
      retryBaseDelayMs: JOB_RETRY_BASE_DELAY_MS,
      pollIntervalMs: s.PRESSROOM_JOB_POLL_MS,
      shutdownGraceMs: s.PRESSROOM_SHUTDOWN_GRACE_MS,
      retentionDays: s.PRESSROOM_JOB_RETENTION_DAYS,
      batchMaxItems: s.PRESSROOM_BATCH_MAX_ITEMS,
    },
    webhooks: {
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      maxAttempts: s.PRESSROOM_WEBHOOK_MAX_ATTEMPTS,
      baseDelayMs: WEBHOOK_BASE_DELAY_MS,
      accountConcurrency: WEBHOOK_ACCOUNT_CONCURRENCY,
    },
    preview: { perMinute: s.PRESSROOM_PREVIEW_PER_MINUTE },
    pdfTools: {
      maxInputBytes: s.PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES,
      maxPages: PDF_TOOLS_MAX_PAGES,
      maxMergeInputs: PDF_TOOLS_MAX_MERGE_INPUTS,
      fetchTimeoutMs: PDF_TOOLS_FETCH_TIMEOUT_MS,
      timeoutMs: s.PRESSROOM_PDF_TOOLS_TIMEOUT_MS,
      concurrency: qpdfConcurrencyFor(machine.cores),
    },
    signing: { tsaUrl: s.PRESSROOM_TSA_URL, timeoutMs: SIGNING_TIMEOUT_MS, slots: signingSlotsFor(machine.cores) },
    assets: {
      maxBytes: ASSET_MAX_BYTES,
      accountMaxBytes: s.PRESSROOM_ASSET_ACCOUNT_MAX_BYTES,
      cacheBytes: ASSET_CACHE_BYTES,
    },
    remoteResources: {
      enabled: s.PRESSROOM_REMOTE_RESOURCES.enabled,
      hosts: [...s.PRESSROOM_REMOTE_RESOURCES.hosts],
      maxBytes: REMOTE_RESOURCE_MAX_BYTES,
      timeoutMs: REMOTE_RESOURCE_TIMEOUT_MS,
      maxPerDocument: REMOTE_RESOURCES_PER_DOCUMENT,
      documentMaxBytes: REMOTE_RESOURCE_DOCUMENT_MAX_BYTES,
      documentTimeoutMs: REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS,
      cacheBytes: REMOTE_RESOURCE_CACHE_BYTES,
    },
    images: {
      urlMaxBytes: IMAGE_URL_MAX_BYTES,
      urlTimeoutMs: IMAGE_URL_TIMEOUT_MS,
    },
    einvoice: { rules: s.PRESSROOM_EINVOICE_RULES },
  };
  const former = keepStricterBounds(env, config);
  const unknown = unknownVariablesWarning(env);
  for (const warning of [...carried.warnings, ...former.warnings, ...(unknown ? [unknown] : [])])
    options.onWarning?.(warning);
  const kept = former.overrides.reduce((merged, bound) => mergeDeep(merged, bound as DeepPartial<Config>), config);
  return deepFreeze(options.tuning ? mergeDeep(kept, options.tuning) : kept);
}

/**
 * The spool (pdf/spool.ts) goes in the data directory, or, when nothing else uses the data
 * directory (PostgreSQL, S3 storage and a given secret key: a stateless process), in the system's
 * temporary directory, so such a process needs no data directory at all.
 */
function spoolDirOf(dataDir: string, usesDataDir: boolean): string {
  return usesDataDir ? join(dataDir, 'spool') : resolve(tmpdir(), 'pressroom-spool');
}

/** Reads the master key from the data dir, or creates it there on first start (embedded default). */
function readOrCreateSecretKey(dataDir: string): string {
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  createDataDir(dataDir);
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

/**
 * Creates the data directory for its owner only (0700): it holds the database, the master key and
 * the documents.
 */
export function createDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

function mergeDeep<T>(base: T, over: DeepPartial<T>): T {
  const merged: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(over as Record<string, unknown>)) {
    if (value === undefined) continue;
    const current = merged[key];
    const nested =
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      current !== null &&
      typeof current === 'object' &&
      !Array.isArray(current);
    merged[key] = nested ? mergeDeep(current, value as DeepPartial<typeof current>) : value;
  }
  return merged as T;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
