/**
 * Variables that were settings once and are not any more: most became named constants beside the code
 * they bound (each with its reason there), a few were merged into a setting. Start-up warns when one
 * is still set (ignored-variables.ts), and the reference lists them (docs/settings.md).
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
import {
  BROWSER_RECYCLE_AFTER,
  PRINT_MS_PER_PAGE,
  TEMPLATE_EVALUATOR,
  TEMPLATE_OUTPUT_LIMIT_BYTES,
} from '../rendering/render-limits.js';
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
import { showBytes } from './setting-kinds.js';

export interface FormerSetting {
  readonly name: string;
  /** What it is now, in words: the fixed value, or the setting that took its place. */
  readonly now: string;
  /** The setting that replaced it, if one did. */
  readonly replacedBy?: string;
  /** Where the value is fixed now, when it is. */
  readonly where?: string;
}

const ms = (value: number) => `${value} ms`;

const GONE_LENDING =
  'gone: how render slots nobody waits for are lent is the scheduler\'s own (docs/rendering.md "Fair rendering")';

export const FORMER_SETTINGS: readonly FormerSetting[] = [
  {
    name: 'PRESSROOM_TEMPLATE_BODY_LIMIT_BYTES',
    now: `${showBytes(TEMPLATE_BODY_LIMIT_BYTES)}, above the largest template the API accepts`,
    where: 'src/http/body-limits.ts',
  },
  {
    name: 'PRESSROOM_SMALL_BODY_LIMIT_BYTES',
    now: showBytes(SMALL_BODY_LIMIT_BYTES),
    where: 'src/http/body-limits.ts',
  },
  {
    name: 'PRESSROOM_JSON_WORKER_THRESHOLD_BYTES',
    now: showBytes(JSON_PARSE_THRESHOLD_BYTES),
    where: 'src/http/json-body/json-body-bounds.ts',
  },
  {
    name: 'PRESSROOM_JSON_WORKER_THREADS',
    now: 'number of cores − 1, at least 1',
    where: 'src/http/json-body/json-body-bounds.ts',
  },
  {
    name: 'PRESSROOM_JSON_WORKER_QUEUE_LIMIT',
    now: String(JSON_PARSE_QUEUE_LIMIT),
    where: 'src/http/json-body/json-body-bounds.ts',
  },
  {
    name: 'PRESSROOM_JSON_WORKER_ACCOUNT_LIMIT',
    now: String(JSON_PARSE_ACCOUNT_LIMIT),
    where: 'src/http/json-body/json-body-bounds.ts',
  },
  {
    name: 'PRESSROOM_JSON_WORKER_MEMORY_MB',
    now: '64 × `PRESSROOM_BODY_LIMIT_BYTES` in MiB, at least 256',
    where: 'src/http/json-body/json-body-bounds.ts',
  },
  {
    name: 'PRESSROOM_DATABASE_POOL_SIZE',
    now: `${DATABASE_POOL_SIZE} connections per process`,
    where: 'src/db/database.ts',
  },
  { name: 'PRESSROOM_SWEEP_INTERVAL_SECONDS', now: `${SWEEP_INTERVAL_MS / 1000} s`, where: 'src/ops/sweep.ts' },
  { name: 'PRESSROOM_PDF_SPOOL_BYTES', now: showBytes(SPOOL_ABOVE_BYTES), where: 'src/pdf/spool.ts' },
  {
    name: 'PRESSROOM_SPOOL_DIR',
    now: "`<data dir>/spool`, or the temporary directory's `pressroom-spool` when nothing else uses the data directory",
    where: 'src/config/load-config.ts',
  },
  {
    name: 'PRESSROOM_PRINT_MS_PER_PAGE_TAGGED',
    now: ms(PRINT_MS_PER_PAGE.tagged),
    where: 'src/rendering/render-limits.ts',
  },
  {
    name: 'PRESSROOM_PRINT_MS_PER_PAGE_UNTAGGED',
    now: ms(PRINT_MS_PER_PAGE.untagged),
    where: 'src/rendering/render-limits.ts',
  },
  {
    name: 'PRESSROOM_TEMPLATE_OUTPUT_LIMIT_BYTES',
    now: showBytes(TEMPLATE_OUTPUT_LIMIT_BYTES),
    where: 'src/rendering/render-limits.ts',
  },
  {
    name: 'PRESSROOM_BROWSER_RECYCLE_AFTER',
    now: `${BROWSER_RECYCLE_AFTER} renders`,
    where: 'src/rendering/render-limits.ts',
  },
  { name: 'PRESSROOM_TEMPLATE_EVALUATOR', now: `\`${TEMPLATE_EVALUATOR}\``, where: 'src/rendering/render-limits.ts' },
  {
    name: 'PRESSROOM_RENDER_PREVIEW_SLOTS',
    now: 'half the render concurrency, at least 1',
    where: 'src/rendering/render-fairness.ts',
  },
  {
    name: 'PRESSROOM_RENDER_ACCOUNT_QUEUE_LIMIT',
    now: 'a quarter of `PRESSROOM_RENDER_QUEUE_LIMIT`, at least 1',
    where: 'src/rendering/render-fairness.ts',
  },
  {
    name: 'PRESSROOM_RENDER_PREVIEW_QUEUE_LIMIT',
    now: String(PREVIEW_QUEUE_LIMIT),
    where: 'src/rendering/render-fairness.ts',
  },
  {
    name: 'PRESSROOM_RENDER_FAILURE_BUDGET_SECONDS',
    now: `${FAILURE_BUDGET_SECONDS} s`,
    where: 'src/rendering/render-fairness.ts',
  },
  {
    name: 'PRESSROOM_RENDER_FAILURE_WINDOW_SECONDS',
    now: `${FAILURE_WINDOW_SECONDS} s`,
    where: 'src/rendering/render-fairness.ts',
  },
  { name: 'PRESSROOM_RENDER_BACKFILL_MS', now: GONE_LENDING },
  { name: 'PRESSROOM_RENDER_BACKFILL_ALONE_MS', now: GONE_LENDING },
  { name: 'PRESSROOM_RENDER_ALONE_WINDOW_SECONDS', now: GONE_LENDING },
  { name: 'PRESSROOM_REQUEST_LEASE_MS', now: 'replaced', replacedBy: 'PRESSROOM_LEASE_MS' },
  { name: 'PRESSROOM_JOB_LEASE_MS', now: 'replaced', replacedBy: 'PRESSROOM_LEASE_MS' },
  {
    name: 'PRESSROOM_JOB_RETRY_BASE_DELAY_MS',
    now: ms(JOB_RETRY_BASE_DELAY_MS),
    where: 'src/jobs/job-retry-policy.ts',
  },
  { name: 'PRESSROOM_WEBHOOK_TIMEOUT_MS', now: ms(WEBHOOK_TIMEOUT_MS), where: 'src/webhooks/webhook-schedule.ts' },
  {
    name: 'PRESSROOM_WEBHOOK_BASE_DELAY_MS',
    now: ms(WEBHOOK_BASE_DELAY_MS),
    where: 'src/webhooks/webhook-schedule.ts',
  },
  {
    name: 'PRESSROOM_WEBHOOK_ACCOUNT_CONCURRENCY',
    now: String(WEBHOOK_ACCOUNT_CONCURRENCY),
    where: 'src/webhooks/webhook-schedule.ts',
  },
  {
    name: 'PRESSROOM_PDF_TOOLS_MAX_PAGES',
    now: String(PDF_TOOLS_MAX_PAGES),
    where: 'src/pdf-tools/pdf-tool-bounds.ts',
  },
  {
    name: 'PRESSROOM_PDF_TOOLS_MAX_MERGE_INPUTS',
    now: String(PDF_TOOLS_MAX_MERGE_INPUTS),
    where: 'src/pdf-tools/pdf-tool-bounds.ts',
  },
  {
    name: 'PRESSROOM_PDF_TOOLS_FETCH_TIMEOUT_MS',
    now: ms(PDF_TOOLS_FETCH_TIMEOUT_MS),
    where: 'src/pdf-tools/pdf-tool-bounds.ts',
  },
  { name: 'PRESSROOM_PDF_TOOLS_CONCURRENCY', now: 'number of cores', where: 'src/pdf-tools/pdf-tool-bounds.ts' },
  { name: 'PRESSROOM_ASSET_MAX_BYTES', now: showBytes(ASSET_MAX_BYTES), where: 'src/assets/assets.ts' },
  { name: 'PRESSROOM_ASSET_CACHE_BYTES', now: showBytes(ASSET_CACHE_BYTES), where: 'src/assets/assets.ts' },
  { name: 'PRESSROOM_REMOTE_RESOURCE_HOSTS', now: 'merged', replacedBy: 'PRESSROOM_REMOTE_RESOURCES' },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_MAX_BYTES',
    now: showBytes(REMOTE_RESOURCE_MAX_BYTES),
    where: 'src/rendering/resources/remote-bounds.ts',
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_TIMEOUT_MS',
    now: ms(REMOTE_RESOURCE_TIMEOUT_MS),
    where: 'src/rendering/resources/remote-bounds.ts',
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCES_PER_DOCUMENT',
    now: String(REMOTE_RESOURCES_PER_DOCUMENT),
    where: 'src/rendering/resources/remote-bounds.ts',
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_DOCUMENT_MAX_BYTES',
    now: showBytes(REMOTE_RESOURCE_DOCUMENT_MAX_BYTES),
    where: 'src/rendering/resources/remote-bounds.ts',
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS',
    now: ms(REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS),
    where: 'src/rendering/resources/remote-bounds.ts',
  },
  {
    name: 'PRESSROOM_REMOTE_RESOURCE_CACHE_BYTES',
    now: showBytes(REMOTE_RESOURCE_CACHE_BYTES),
    where: 'src/rendering/resources/remote-bounds.ts',
  },
  {
    name: 'PRESSROOM_IMAGE_URL_MAX_BYTES',
    now: showBytes(IMAGE_URL_MAX_BYTES),
    where: 'src/documents/image-url-bounds.ts',
  },
  { name: 'PRESSROOM_IMAGE_URL_TIMEOUT_MS', now: ms(IMAGE_URL_TIMEOUT_MS), where: 'src/documents/image-url-bounds.ts' },
];
