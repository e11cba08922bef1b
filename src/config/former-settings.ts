/**
 * Variables that were settings once and are not any more, and what a value an operator still sets
 * does after an upgrade (issue 50 point 5): nothing is lost without a word.
 *   - `carry`: its meaning carries over to a setting, so it keeps working, read as that setting (the
 *     setting itself, when set too, wins); start-up warns naming the replacement.
 *   - `keep`: a bound that became a constant. The constant is the most it may be: an operator's lower
 *     (stricter) value is kept as the bound, a higher one is not; start-up says which applies.
 *   - neither: a constant that is not a bound (a threshold choosing between two ways of doing the same
 *     work, an interval, a retry delay, a choice) or gone; start-up says it is ignored and what applies.
 * Applied by former-settings-reading.ts; listed in the reference (docs/settings.md).
 */
import { ASSET_CACHE_BYTES, ASSET_MAX_BYTES } from '../assets/assets.js';
import { DATABASE_POOL_SIZE } from '../db/database.js';
import { IMAGE_URL_MAX_BYTES, IMAGE_URL_TIMEOUT_MS } from '../documents/image-url-bounds.js';
import { SMALL_BODY_LIMIT_BYTES, TEMPLATE_BODY_LIMIT_BYTES } from '../http/body-limits.js';
import {
  JSON_PARSE_ACCOUNT_LIMIT,
  JSON_PARSE_QUEUE_LIMIT,
  JSON_PARSE_THRESHOLD_BYTES,
} from '../http/json-body/json-body-bounds.js';
import { JOB_RETRY_BASE_DELAY_MS } from '../jobs/job-retry-policy.js';
import {
  PDF_TOOLS_FETCH_TIMEOUT_MS,
  PDF_TOOLS_MAX_MERGE_INPUTS,
  PDF_TOOLS_MAX_PAGES,
} from '../pdf-tools/pdf-tool-bounds.js';
import { FAILURE_BUDGET_SECONDS, FAILURE_WINDOW_SECONDS, PREVIEW_QUEUE_LIMIT } from '../rendering/render-fairness.js';
import { BROWSER_RECYCLE_AFTER, PRINT_MS_PER_PAGE, TEMPLATE_OUTPUT_LIMIT_BYTES } from '../rendering/render-limits.js';
import {
  REMOTE_RESOURCE_CACHE_BYTES,
  REMOTE_RESOURCE_DOCUMENT_MAX_BYTES,
  REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS,
  REMOTE_RESOURCE_MAX_BYTES,
  REMOTE_RESOURCE_TIMEOUT_MS,
  REMOTE_RESOURCES_PER_DOCUMENT,
} from '../rendering/resources/remote-bounds.js';
import { SWEEP_INTERVAL_MS } from '../ops/sweep.js';
import { SPOOL_ABOVE_BYTES } from '../pdf/spool.js';
import {
  WEBHOOK_ACCOUNT_CONCURRENCY,
  WEBHOOK_BASE_DELAY_MS,
  WEBHOOK_TIMEOUT_MS,
} from '../webhooks/webhook-schedule.js';
import type { Config } from '../shared/config.js';
import { showBytes, type Unit } from './setting-kinds.js';

/** `a.b.c` of every number in `T` (not in arrays or records of nullable numbers). */
export type NumberPath<T, Prefix extends string = ''> = {
  [K in keyof T & string]: T[K] extends number
    ? `${Prefix}${K}`
    : T[K] extends readonly unknown[]
      ? never
      : T[K] extends object
        ? NumberPath<T[K], `${Prefix}${K}.`>
        : never;
}[keyof T & string];

/** A former bound: where its value lives now, and the bounds it had as a setting. */
export interface KeptBound {
  readonly path: NumberPath<Config>;
  readonly min: number;
  readonly max: number;
  readonly unit: Unit;
}

/** The value a setting is read as, from a former setting's `raw` and what the setting holds so far; undefined: the setting wins. */
export type CarryOver = (
  raw: string,
  current: { readonly raw: string; readonly byOperator: boolean } | undefined,
) => string | undefined;

export interface FormerSetting {
  readonly name: string;
  /** What it is now, in words: the fixed value, or what became of it. */
  readonly now: string;
  /** The setting that took its place, when its meaning carries over (with `carry`). */
  readonly replacedBy?: string;
  /** How a value carries over to `replacedBy`. */
  readonly carry?: CarryOver;
  /** Where the value is fixed now, when it is. */
  readonly where?: string;
  /** A bound that became a constant: a lower value set is kept. */
  readonly keep?: KeptBound;
  /** Why a former constant's value is not kept, when it is not a bound (for the reference). */
  readonly notBound?: string;
  /** The value that applies now, when it depends on the installation (a path, the machine). */
  readonly applies?: (config: Config) => string;
}

const ms = (value: number) => `${value} ms`;
const MiB = 1024 * 1024;
const UNBOUNDED = Number.MAX_SAFE_INTEGER;
const keep = (path: NumberPath<Config>, min: number, max: number, unit: Unit): KeptBound => ({ path, min, max, unit });

const GONE_LENDING =
  'gone: how render slots nobody waits for are lent is the scheduler\'s own (docs/rendering.md "Fair rendering")';
const THRESHOLD = 'a threshold between two ways of doing the same work, not a bound';
const SCHEDULE = 'a schedule, not a bound';

/**
 * The request and the job lease became one: the longer of the two carries over, so no process loses
 * what it holds sooner than before; PRESSROOM_LEASE_MS, when set, wins.
 */
const longerLease: CarryOver = (raw, current) => {
  if (current?.byOperator) return undefined;
  return current !== undefined && Number(current.raw) > Number(raw) ? current.raw : raw;
};

/**
 * The hosts list became the entries after `on` of PRESSROOM_REMOTE_RESOURCES. A bare `on` there is
 * the former on/off switch the list went with, so the two merge; `off`, or a value with hosts of its
 * own (written for this version), wins.
 */
const hostsAfterOn: CarryOver = (raw, current) => {
  const hosts = raw
    .split(',')
    .map((entry) => entry.trim())
    .join(',');
  if (current === undefined) return `on,${hosts}`;
  const value = current.raw.trim();
  return ['on', 'true', '1', 'yes'].includes(value.toLowerCase()) ? `${value},${hosts}` : undefined;
};

export const FORMER_SETTINGS: readonly FormerSetting[] = [
  {
    name: 'PRESSROOM_TEMPLATE_BODY_LIMIT_BYTES',
    now: `${showBytes(TEMPLATE_BODY_LIMIT_BYTES)}, above the largest template the API accepts`,
    where: 'src/http/body-limits.ts',
    keep: keep('http.templateBodyLimitBytes', 1024, UNBOUNDED, 'bytes'),
  },
  {
    name: 'PRESSROOM_SMALL_BODY_LIMIT_BYTES',
    now: showBytes(SMALL_BODY_LIMIT_BYTES),
    where: 'src/http/body-limits.ts',
    keep: keep('http.smallBodyLimitBytes', 1024, UNBOUNDED, 'bytes'),
  },
  {
    name: 'PRESSROOM_JSON_WORKER_THRESHOLD_BYTES',
    now: showBytes(JSON_PARSE_THRESHOLD_BYTES),
    where: 'src/http/json-body/json-body-bounds.ts',
    notBound: THRESHOLD,
  },
  {
    name: 'PRESSROOM_JSON_WORKER_THREADS',
    now: 'number of cores − 1, at least 1',
    where: 'src/http/json-body/json-body-bounds.ts',
    keep: keep('http.jsonWorkers.threads', 1, 64, 'count'),
  },
  {
    name: 'PRESSROOM_JSON_WORKER_QUEUE_LIMIT',
    now: String(JSON_PARSE_QUEUE_LIMIT),
    where: 'src/http/json-body/json-body-bounds.ts',
    keep: keep('http.jsonWorkers.queueLimit', 0, 10_000, 'count'),
  },
  {
    name: 'PRESSROOM_JSON_WORKER_ACCOUNT_LIMIT',
    now: String(JSON_PARSE_ACCOUNT_LIMIT),
    where: 'src/http/json-body/json-body-bounds.ts',
    keep: keep('http.jsonWorkers.accountLimit', 1, 10_000, 'count'),
  },
  {
    name: 'PRESSROOM_JSON_WORKER_MEMORY_MB',
    now: '64 × `PRESSROOM_BODY_LIMIT_BYTES` in MiB, at least 256',
    where: 'src/http/json-body/json-body-bounds.ts',
    keep: keep('http.jsonWorkers.memoryMb', 64, 65_536, 'MB'),
  },
  {
    name: 'PRESSROOM_DATABASE_POOL_SIZE',
    now: `${DATABASE_POOL_SIZE} connections per process`,
    where: 'src/db/database.ts',
    keep: keep('database.poolSize', 1, 200, 'count'),
  },
  {
    name: 'PRESSROOM_SWEEP_INTERVAL_SECONDS',
    now: `${SWEEP_INTERVAL_MS / 1000} s`,
    where: 'src/ops/sweep.ts',
    notBound: SCHEDULE,
  },
  {
    name: 'PRESSROOM_PDF_SPOOL_BYTES',
    now: showBytes(SPOOL_ABOVE_BYTES),
    where: 'src/pdf/spool.ts',
    notBound: THRESHOLD,
  },
  {
    name: 'PRESSROOM_SPOOL_DIR',
    now: "`<data dir>/spool`, or the temporary directory's `pressroom-spool` when nothing else uses the data directory",
    where: 'src/config/load-config.ts',
    notBound: 'a place, not a bound',
    applies: (c) => c.storage.spoolDir,
  },
  {
    name: 'PRESSROOM_PRINT_MS_PER_PAGE_TAGGED',
    now: ms(PRINT_MS_PER_PAGE.tagged),
    where: 'src/rendering/render-limits.ts',
    notBound: 'a starting figure, replaced by the installation’s own print speed, not a bound',
  },
  {
    name: 'PRESSROOM_PRINT_MS_PER_PAGE_UNTAGGED',
    now: ms(PRINT_MS_PER_PAGE.untagged),
    where: 'src/rendering/render-limits.ts',
    notBound: 'a starting figure, replaced by the installation’s own print speed, not a bound',
  },
  {
    name: 'PRESSROOM_TEMPLATE_OUTPUT_LIMIT_BYTES',
    now: showBytes(TEMPLATE_OUTPUT_LIMIT_BYTES),
    where: 'src/rendering/render-limits.ts',
    keep: keep('rendering.templateOutputLimitBytes', 1024, UNBOUNDED, 'bytes'),
  },
  {
    name: 'PRESSROOM_BROWSER_RECYCLE_AFTER',
    now: `${BROWSER_RECYCLE_AFTER} renders`,
    where: 'src/rendering/render-limits.ts',
    keep: keep('rendering.recycleAfterRenders', 1, UNBOUNDED, 'count'),
  },
  {
    name: 'PRESSROOM_TEMPLATE_EVALUATOR',
    now: '`compartment` (a fresh SES Compartment per document, the only evaluator)',
    where: 'src/browser/sandbox/evaluator-page.ts',
    notBound: 'a choice, not a bound',
  },
  {
    name: 'PRESSROOM_RENDER_PREVIEW_SLOTS',
    now: 'half the render concurrency, at least 1',
    where: 'src/rendering/render-fairness.ts',
    keep: keep('renderFairness.previewSlots', 1, 64, 'count'),
  },
  {
    name: 'PRESSROOM_RENDER_ACCOUNT_QUEUE_LIMIT',
    now: 'a quarter of `PRESSROOM_RENDER_QUEUE_LIMIT`, at least 1',
    where: 'src/rendering/render-fairness.ts',
    keep: keep('renderFairness.accountQueueLimit', 0, UNBOUNDED, 'count'),
  },
  {
    name: 'PRESSROOM_RENDER_PREVIEW_QUEUE_LIMIT',
    now: String(PREVIEW_QUEUE_LIMIT),
    where: 'src/rendering/render-fairness.ts',
    keep: keep('renderFairness.accountPreviewQueueLimit', 0, UNBOUNDED, 'count'),
  },
  {
    name: 'PRESSROOM_RENDER_FAILURE_BUDGET_SECONDS',
    now: `${FAILURE_BUDGET_SECONDS} s`,
    where: 'src/rendering/render-fairness.ts',
    keep: keep('renderFairness.failureBudgetSeconds', 1, UNBOUNDED, 'seconds'),
  },
  {
    name: 'PRESSROOM_RENDER_FAILURE_WINDOW_SECONDS',
    now: `${FAILURE_WINDOW_SECONDS} s`,
    where: 'src/rendering/render-fairness.ts',
    notBound: 'the window of the failure budget: a longer one is the stricter, so "at most" does not apply',
  },
  { name: 'PRESSROOM_RENDER_BACKFILL_MS', now: GONE_LENDING },
  { name: 'PRESSROOM_RENDER_BACKFILL_ALONE_MS', now: GONE_LENDING },
  { name: 'PRESSROOM_RENDER_ALONE_WINDOW_SECONDS', now: GONE_LENDING },
  {
    name: 'PRESSROOM_REQUEST_LEASE_MS',
    now: 'one lease for requests and jobs, the longer of the two when both are set; `PRESSROOM_LEASE_MS`, set too, wins',
    replacedBy: 'PRESSROOM_LEASE_MS',
    carry: longerLease,
  },
  {
    name: 'PRESSROOM_JOB_LEASE_MS',
    now: 'one lease for requests and jobs, the longer of the two when both are set; `PRESSROOM_LEASE_MS`, set too, wins',
    replacedBy: 'PRESSROOM_LEASE_MS',
    carry: longerLease,
  },
  {
    name: 'PRESSROOM_JOB_RETRY_BASE_DELAY_MS',
    now: ms(JOB_RETRY_BASE_DELAY_MS),
    where: 'src/jobs/job-retry-policy.ts',
    notBound: SCHEDULE,
  },
  {
    name: 'PRESSROOM_WEBHOOK_TIMEOUT_MS',
    now: ms(WEBHOOK_TIMEOUT_MS),
    where: 'src/webhooks/webhook-schedule.ts',
    keep: keep('webhooks.timeoutMs', 100, UNBOUNDED, 'ms'),
  },
  {
    name: 'PRESSROOM_WEBHOOK_BASE_DELAY_MS',
    now: ms(WEBHOOK_BASE_DELAY_MS),
    where: 'src/webhooks/webhook-schedule.ts',
    notBound: SCHEDULE,
  },
  {
    name: 'PRESSROOM_WEBHOOK_ACCOUNT_CONCURRENCY',
    now: String(WEBHOOK_ACCOUNT_CONCURRENCY),
    where: 'src/webhooks/webhook-schedule.ts',
    keep: keep('webhooks.accountConcurrency', 1, 1000, 'count'),
  },
  {
    name: 'PRESSROOM_PDF_TOOLS_MAX_PAGES',
    now: String(PDF_TOOLS_MAX_PAGES),
    where: 'src/pdf-tools/pdf-tool-bounds.ts',
    keep: keep('pdfTools.maxPages', 1, 100_000, 'pages'),
  },
  {
    name: 'PRESSROOM_PDF_TOOLS_MAX_MERGE_INPUTS',
    now: String(PDF_TOOLS_MAX_MERGE_INPUTS),
    where: 'src/pdf-tools/pdf-tool-bounds.ts',
    keep: keep('pdfTools.maxMergeInputs', 2, 1000, 'count'),
  },
  {
    name: 'PRESSROOM_PDF_TOOLS_FETCH_TIMEOUT_MS',
    now: ms(PDF_TOOLS_FETCH_TIMEOUT_MS),
    where: 'src/pdf-tools/pdf-tool-bounds.ts',
    keep: keep('pdfTools.fetchTimeoutMs', 100, UNBOUNDED, 'ms'),
  },
  {
    name: 'PRESSROOM_PDF_TOOLS_CONCURRENCY',
    now: 'number of cores',
    where: 'src/pdf-tools/pdf-tool-bounds.ts',
    keep: keep('pdfTools.concurrency', 1, 64, 'count'),
  },
  {
    name: 'PRESSROOM_ASSET_MAX_BYTES',
    now: showBytes(ASSET_MAX_BYTES),
    where: 'src/assets/assets.ts',
    keep: keep('assets.maxBytes', 1024, 100 * MiB, 'bytes'),
  },
  {
    name: 'PRESSROOM_ASSET_CACHE_BYTES',
    now: showBytes(ASSET_CACHE_BYTES),
    where: 'src/assets/assets.ts',
    keep: keep('assets.cacheBytes', 0, UNBOUNDED, 'bytes'),
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_HOSTS',
    now: 'its hosts after `on` (`on,host[:port],…`); a bare `on` there takes them, `off` or hosts of its own win',
    replacedBy: 'PRESSROOM_REMOTE_RESOURCES',
    carry: hostsAfterOn,
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_MAX_BYTES',
    now: showBytes(REMOTE_RESOURCE_MAX_BYTES),
    where: 'src/rendering/resources/remote-bounds.ts',
    keep: keep('remoteResources.maxBytes', 1024, UNBOUNDED, 'bytes'),
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_TIMEOUT_MS',
    now: ms(REMOTE_RESOURCE_TIMEOUT_MS),
    where: 'src/rendering/resources/remote-bounds.ts',
    keep: keep('remoteResources.timeoutMs', 100, 120_000, 'ms'),
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCES_PER_DOCUMENT',
    now: String(REMOTE_RESOURCES_PER_DOCUMENT),
    where: 'src/rendering/resources/remote-bounds.ts',
    keep: keep('remoteResources.maxPerDocument', 0, 10_000, 'count'),
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_DOCUMENT_MAX_BYTES',
    now: showBytes(REMOTE_RESOURCE_DOCUMENT_MAX_BYTES),
    where: 'src/rendering/resources/remote-bounds.ts',
    keep: keep('remoteResources.documentMaxBytes', 1024, UNBOUNDED, 'bytes'),
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS',
    now: ms(REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS),
    where: 'src/rendering/resources/remote-bounds.ts',
    keep: keep('remoteResources.documentTimeoutMs', 100, 600_000, 'ms'),
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_CACHE_BYTES',
    now: showBytes(REMOTE_RESOURCE_CACHE_BYTES),
    where: 'src/rendering/resources/remote-bounds.ts',
    keep: keep('remoteResources.cacheBytes', 0, UNBOUNDED, 'bytes'),
  },
  {
    name: 'PRESSROOM_IMAGE_URL_MAX_BYTES',
    now: showBytes(IMAGE_URL_MAX_BYTES),
    where: 'src/documents/image-url-bounds.ts',
    keep: keep('images.urlMaxBytes', 1024, 100 * MiB, 'bytes'),
  },
  {
    name: 'PRESSROOM_IMAGE_URL_TIMEOUT_MS',
    now: ms(IMAGE_URL_TIMEOUT_MS),
    where: 'src/documents/image-url-bounds.ts',
    keep: keep('images.urlTimeoutMs', 100, 120_000, 'ms'),
  },
];
