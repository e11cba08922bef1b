/**
 * Every setting, declared once: its environment variable, kind (type, unit, bounds), default (a value,
 * or a function of the settings declared before it and of the machine, said in words by `defaultDoc`),
 * one line of doc and its group. The parser and its messages (`parseSettings`), the typed values
 * (`SettingValues`) and the reference (docs/settings.md, `npm run settings:docs`) are made from this list.
 *
 * A setting is a value an operator is meant to change. A value nobody should tune is a named constant
 * beside the code it bounds, with its reason; former settings are listed in former-settings.ts.
 */
import { availableParallelism, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RATE_LIMIT_MAXIMUMS } from '../accounts/accounts.js';
import type { EInvoiceRulesMode } from '../shared/config.js';
import {
  bool,
  bytes,
  directory,
  limit,
  oneOf,
  remoteResources,
  secret,
  text,
  url,
  whole,
  type Kind,
} from './setting-kinds.js';

/** What defaults may depend on besides earlier settings. */
export interface Machine {
  /** Cores this process may use. */
  readonly cores: number;
  /** Memory this process may count on, in MB: the machine's, or its container's limit when lower. */
  readonly memoryMb: number;
}

/** The groups of the reference, in its order, each with the line that opens it. */
export const GROUPS = {
  server: { title: 'Server', intro: 'Where the service listens, who may reach its operator routes, and how it logs.' },
  storage: {
    title: 'Storage',
    intro: 'Where the service keeps its state: the data directory, the database, generated files, the master key.',
  },
  rendering: {
    title: 'Rendering',
    intro:
      'Chromium, the render slots and how they are shared between accounts, and the deadlines (docs/rendering.md; long documents: docs/long-documents.md).',
  },
  bounds: {
    title: 'Document bounds',
    intro:
      'What one document may cost; past a bound its render stops with `422 DOCUMENT_TOO_LARGE` (docs/rendering.md "Bounded documents").',
  },
  rateLimits: {
    title: 'Rate limits',
    intro: 'Requests per account by plan (docs/rate-limits.md); an account may have its own limits (admin API).',
  },
  jobs: {
    title: 'Jobs and webhooks',
    intro:
      'The async queue and its workers (docs/jobs.md), webhook delivery (docs/webhooks.md), and the leases that survive a crash.',
  },
  pdfTools: {
    title: 'PDF tools',
    intro: 'Merge, extract pages, rotate (docs/pdf-tools.md); signing (docs/finishing.md).',
  },
  resources: {
    title: 'Assets and remote resources',
    intro: 'The asset library and the remote images, fonts and stylesheets documents load (docs/assets.md).',
  },
  einvoice: {
    title: 'E-invoices',
    intro: 'The official rules e-invoices are judged by (docs/einvoice.md "The official rules").',
  },
} as const;

export type Group = keyof typeof GROUPS;

/** A declared setting, whatever its value type. */
export interface Setting<T = unknown> {
  /** The environment variable. */
  readonly name: string;
  readonly group: Group;
  readonly kind: Kind<T>;
  /** One line for the reference. */
  readonly doc: string;
  /** The value when the variable is unset or empty: a value, or one made from earlier settings and the machine. */
  readonly default: T | ((earlier: Readonly<Record<string, unknown>>, machine: Machine) => T);
  /** The default in words, for the reference; required when `default` is a function. */
  readonly defaultDoc?: string;
}

type Declared<N extends string, T, Earlier> = {
  readonly name: N;
  readonly group: Group;
  readonly kind: Kind<T>;
  readonly doc: string;
} & (
  | { readonly default: T; readonly defaultDoc?: string }
  | { readonly default: (earlier: Earlier, machine: Machine) => T; readonly defaultDoc: string }
);

/** The list under construction; each `add` knows the values declared before it, for its default. */
class Declarations<Values> {
  constructor(readonly list: readonly Setting[]) {}

  add<const N extends string, T>(setting: Declared<N, T, Values>): Declarations<Values & { readonly [K in N]: T }> {
    if (this.list.some((s) => s.name === setting.name)) throw new Error(`${setting.name} is declared twice`);
    return new Declarations([...this.list, setting as Setting]);
  }
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const HOUR_MS = 3_600_000;

const declarations = new Declarations<object>([])
  // Server
  .add({
    name: 'PORT',
    group: 'server',
    kind: whole(0, 65535),
    default: 8080,
    doc: 'HTTP port of the API (and, for `--role worker`, of /healthz, /readyz and /metrics).',
  })
  .add({
    name: 'PRESSROOM_HOST',
    group: 'server',
    kind: text('address'),
    default: '0.0.0.0',
    doc: 'Address to listen on.',
  })
  .add({
    name: 'PRESSROOM_PUBLIC_URL',
    group: 'server',
    kind: url(['http:', 'https:']),
    default: (s) => `http://localhost:${s.PORT}`,
    defaultDoc: '`http://localhost:$PORT`',
    doc: 'The address clients reach this service at: the base of download links and of the API docs.',
  })
  .add({
    name: 'PRESSROOM_LOG_LEVEL',
    group: 'server',
    kind: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    doc: 'Least severe log level written; logs are JSON lines on stdout.',
  })
  .add({
    name: 'PRESSROOM_ADMIN_TOKEN',
    group: 'server',
    kind: secret(16),
    default: undefined,
    defaultDoc: 'unset: the admin API answers 404',
    doc: 'Bearer token of the admin API (accounts, credits, keys).',
  })
  .add({
    name: 'PRESSROOM_METRICS_TOKEN',
    group: 'server',
    kind: secret(16, '(for example `openssl rand -hex 24`)'),
    default: undefined,
    defaultDoc: 'unset: `/metrics` is public on the API port (block it at the proxy, or set this)',
    doc: 'Bearer token `GET /metrics` requires.',
  })
  .add({
    name: 'PRESSROOM_ALLOW_PRIVATE_NETWORKS',
    group: 'server',
    kind: bool(),
    default: false,
    doc: 'Let customer URLs (webhooks, S3 endpoints, `pdf_url`, `image_url`) reach private and loopback addresses: development and tests only.',
  })
  .add({
    name: 'PRESSROOM_BODY_LIMIT_BYTES',
    group: 'server',
    kind: bytes(1024, GiB),
    default: 10 * MiB,
    doc: 'Largest request body of the generation routes (`/v1/pdf/create`, `create-async`, `/v1/image/create`, preview), whose `data` may be large (413 above); the JSON parse threads get heap in proportion.',
  })
  // Storage
  .add({
    name: 'PRESSROOM_DATA_DIR',
    group: 'storage',
    kind: directory(),
    default: () => directory().parse('./data', 'PRESSROOM_DATA_DIR'),
    defaultDoc: '`./data`',
    doc: 'The SQLite database, generated files, the generated master key and the spool (created, owner only).',
  })
  .add({
    name: 'PRESSROOM_DATABASE_URL',
    group: 'storage',
    kind: url(['postgres:', 'postgresql:']),
    default: undefined,
    defaultDoc: 'unset: SQLite in the data directory',
    doc: 'PostgreSQL connection string; needed to run several processes.',
  })
  .add({
    name: 'PRESSROOM_REDIS_URL',
    group: 'storage',
    kind: url(['redis:', 'rediss:']),
    default: undefined,
    defaultDoc: 'unset: in memory, per process',
    doc: 'Shared store of the rate limits for several processes.',
  })
  .add({
    name: 'PRESSROOM_STORAGE_URL',
    group: 'storage',
    kind: url(['file:', 's3:']),
    default: (s) => pathToFileURL(join(s.PRESSROOM_DATA_DIR, 'files')).href,
    defaultDoc: '`file://<data dir>/files`',
    doc: 'Where generated files go: a directory, or `s3://bucket/prefix?endpoint=…&region=…&force_path_style=true` (presigned links).',
  })
  .add({
    name: 'PRESSROOM_SECRET_KEY',
    group: 'storage',
    kind: secret(32, '(for example `openssl rand -hex 32`)'),
    default: undefined,
    defaultDoc: 'generated into `<data dir>/secret.key` on first start',
    doc: 'Master key for signed links and tokens and for secrets at rest; every process of one installation needs the same.',
  })
  // Rendering
  .add({
    name: 'PRESSROOM_CHROMIUM_PATH',
    group: 'rendering',
    kind: text('path'),
    default: '/usr/bin/chromium',
    doc: "Debian's Chromium; nothing downloads a browser. `serve` exits 1 when it does not start.",
  })
  .add({
    name: 'PRESSROOM_RENDER_CONCURRENCY',
    group: 'rendering',
    kind: whole(1, 64),
    default: (_s, m) => m.cores,
    defaultDoc: 'number of cores',
    doc: 'Documents one process renders at once (render slots).',
  })
  .add({
    name: 'PRESSROOM_RENDER_QUEUE_LIMIT',
    group: 'rendering',
    kind: whole(0, 100_000),
    default: 100,
    doc: 'Renders that may wait for a slot before new ones get `503 RENDERER_BUSY`; one account may fill a quarter of it.',
  })
  .add({
    name: 'PRESSROOM_RENDER_ACCOUNT_SLOTS',
    group: 'rendering',
    kind: whole(1, 64),
    default: (s) => Math.max(1, s.PRESSROOM_RENDER_CONCURRENCY - 1),
    defaultDoc: 'render concurrency − 1, at least 1',
    doc: 'Render slots one account may hold at once, so one busy account always leaves slots to the others.',
  })
  .add({
    name: 'PRESSROOM_RENDER_TIMEOUT_MS',
    group: 'rendering',
    kind: whole(100, HOUR_MS, 'ms'),
    default: 30_000,
    doc: 'Whole-render deadline of a synchronous request (`RENDER_TIMEOUT`).',
  })
  .add({
    name: 'PRESSROOM_ASYNC_RENDER_TIMEOUT_MS',
    group: 'rendering',
    kind: whole(100, 24 * HOUR_MS, 'ms'),
    default: 300_000,
    doc: "Whole-render deadline of a job's document (`create-async`): long documents go there.",
  })
  .add({
    name: 'PRESSROOM_TEMPLATE_TIMEOUT_MS',
    group: 'rendering',
    kind: whole(50, HOUR_MS, 'ms'),
    default: 5000,
    doc: 'Template evaluation deadline, inside the render deadline (`TEMPLATE_TIMEOUT`).',
  })
  // Document bounds
  .add({
    name: 'PRESSROOM_MAX_PAGES',
    group: 'bounds',
    kind: whole(1, 1_000_000, 'pages'),
    default: 2000,
    doc: 'Most pages a document may have; Chromium prints at most one more (`bound: "pages"`).',
  })
  .add({
    name: 'PRESSROOM_MAX_DOCUMENT_BYTES',
    group: 'bounds',
    kind: bytes(1024, 64 * GiB),
    default: 100 * MiB,
    doc: 'Largest PDF Chromium may produce, counted as it is streamed out (`bound: "bytes"`).',
  })
  .add({
    name: 'PRESSROOM_MAX_IMAGE_PIXELS',
    group: 'bounds',
    kind: whole(1, 10_000_000_000, 'pixels'),
    default: 100_000_000,
    doc: 'Most decoded pixels all of a document\'s images may have together, checked before printing (`bound: "image_pixels"`).',
  })
  .add({
    name: 'PRESSROOM_RENDERER_MEMORY_MB',
    group: 'bounds',
    kind: whole(64, 1024 * 1024, 'MB'),
    default: (s, m) => defaultRendererMemoryMb(m.memoryMb, s.PRESSROOM_RENDER_CONCURRENCY),
    defaultDoc: "half the machine's (or container's) memory over the render concurrency, at least 2048",
    doc: 'Resident memory past which a Chromium renderer or print compositor is killed and only its render fails (`bound: "memory"`).',
  })
  // Rate limits
  .add({
    name: 'PRESSROOM_PLAN_FREE_PER_MINUTE',
    group: 'rateLimits',
    kind: limit(1, RATE_LIMIT_MAXIMUMS.perMinute),
    default: 60,
    doc: 'Requests per minute of a `free` account.',
  })
  .add({
    name: 'PRESSROOM_PLAN_FREE_PER_DAY',
    group: 'rateLimits',
    kind: limit(1, RATE_LIMIT_MAXIMUMS.perDay),
    default: 1000,
    doc: 'Requests per day of a `free` account.',
  })
  .add({
    name: 'PRESSROOM_PLAN_PRO_PER_MINUTE',
    group: 'rateLimits',
    kind: limit(1, RATE_LIMIT_MAXIMUMS.perMinute),
    default: 120,
    doc: 'Requests per minute of a `pro` account.',
  })
  .add({
    name: 'PRESSROOM_PLAN_PRO_PER_DAY',
    group: 'rateLimits',
    kind: limit(1, RATE_LIMIT_MAXIMUMS.perDay),
    default: 10_000,
    doc: 'Requests per day of a `pro` account.',
  })
  .add({
    name: 'PRESSROOM_PLAN_ENTERPRISE_PER_MINUTE',
    group: 'rateLimits',
    kind: limit(1, RATE_LIMIT_MAXIMUMS.perMinute),
    default: null,
    doc: 'Requests per minute of an `enterprise` account.',
  })
  .add({
    name: 'PRESSROOM_PLAN_ENTERPRISE_PER_DAY',
    group: 'rateLimits',
    kind: limit(1, RATE_LIMIT_MAXIMUMS.perDay),
    default: null,
    doc: 'Requests per day of an `enterprise` account.',
  })
  .add({
    name: 'PRESSROOM_PREVIEW_PER_MINUTE',
    group: 'rateLimits',
    kind: whole(1, RATE_LIMIT_MAXIMUMS.perMinute, 'requests'),
    default: 30,
    doc: 'Free previews per account and minute (the studio).',
  })
  // Jobs and webhooks
  .add({
    name: 'PRESSROOM_WORKER_CONCURRENCY',
    group: 'jobs',
    kind: whole(1, 64),
    default: (s) => s.PRESSROOM_RENDER_CONCURRENCY,
    defaultDoc: 'render concurrency',
    doc: 'Jobs one worker process renders at once.',
  })
  .add({
    name: 'PRESSROOM_JOB_POLL_MS',
    group: 'jobs',
    kind: whole(10, 600_000, 'ms'),
    default: 1000,
    doc: 'How often idle workers look for jobs and webhooks when no wake-up arrives.',
  })
  .add({
    name: 'PRESSROOM_JOB_MAX_ATTEMPTS',
    group: 'jobs',
    kind: whole(1, 100),
    default: 5,
    doc: 'Attempts before a transient failure of a job becomes permanent.',
  })
  .add({
    name: 'PRESSROOM_BATCH_MAX_ITEMS',
    group: 'jobs',
    kind: whole(1, 1_000_000, 'count'),
    default: 50_000,
    doc: 'Most items one batch (`POST /v1/pdf/batches`) may have; more is a 422 before anything is charged.',
  })
  .add({
    name: 'PRESSROOM_JOB_RETENTION_DAYS',
    group: 'jobs',
    kind: whole(0, 3650, 'days'),
    default: 30,
    doc: 'Finished jobs (their data and webhook records) are deleted this long after they finished; 0 keeps them.',
  })
  .add({
    name: 'PRESSROOM_LEASE_MS',
    group: 'jobs',
    kind: whole(1000, HOUR_MS, 'ms'),
    // Renewed every third of it, so a live process must miss three renewals in a row to lose what it
    // holds; a dead one's work is taken over within half a minute.
    default: 30_000,
    doc: "Lease under which a process holds a claimed job, a sync generation's reserved credit and its `Idempotency-Key`; when the process dies, another takes them over after this.",
  })
  .add({
    name: 'PRESSROOM_SHUTDOWN_GRACE_MS',
    group: 'jobs',
    kind: whole(0, HOUR_MS, 'ms'),
    default: 30_000,
    doc: 'On SIGTERM, time jobs in flight get to finish before they are handed back to the queue.',
  })
  .add({
    name: 'PRESSROOM_WEBHOOK_MAX_ATTEMPTS',
    group: 'jobs',
    kind: whole(1, 50),
    default: 8,
    doc: 'Attempts of one webhook delivery; the default spreads them over more than an hour (docs/webhooks.md).',
  })
  // PDF tools
  .add({
    name: 'PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES',
    group: 'pdfTools',
    kind: bytes(1024, GiB),
    default: 50 * MiB,
    doc: "Bytes of PDF one request may bring, all inputs together (`422 pdf_too_large` above); the tools' body limit is 4/3 of it plus 1 MiB.",
  })
  .add({
    name: 'PRESSROOM_TSA_URL',
    group: 'pdfTools',
    kind: url(['http:', 'https:']),
    default: undefined,
    defaultDoc: 'unset: `timestamp: true` needs an account-named `tsa_url`',
    doc: 'RFC 3161 time-stamp authority of `timestamp: true` signatures (PAdES B-T; docs/finishing.md), reached through the outbound guard.',
  })
  .add({
    name: 'PRESSROOM_PDF_TOOLS_TIMEOUT_MS',
    group: 'pdfTools',
    kind: whole(100, HOUR_MS, 'ms'),
    default: 60_000,
    doc: 'Deadline of one qpdf run (`PDF_TOOL_TIMEOUT`), and its CPU ceiling in seconds (`PDF_TOO_COMPLEX`).',
  })
  // Assets and remote resources
  .add({
    name: 'PRESSROOM_ASSET_ACCOUNT_MAX_BYTES',
    group: 'resources',
    kind: bytes(1024, 1024 * GiB),
    default: 200 * MiB,
    doc: "All of one account's assets together (413 above).",
  })
  .add({
    name: 'PRESSROOM_REMOTE_RESOURCES',
    group: 'resources',
    kind: remoteResources(),
    default: { enabled: true, hosts: [] },
    defaultDoc: '`on`: public hosts only',
    doc: 'Whether documents may load remote images, fonts and stylesheets; the hosts listed after `on` may also be reached on private addresses, no others ever.',
  })
  // E-invoices
  .add({
    name: 'PRESSROOM_EINVOICE_RULES',
    group: 'einvoice',
    kind: oneOf<EInvoiceRulesMode>(['auto', 'required', 'off']),
    default: 'auto' as EInvoiceRulesMode,
    doc: 'The official rules pack (`pressroom einvoice rules install`): `auto` uses it when installed, `required` answers e-invoice requests `503 EINVOICE_RULES_MISSING` until it is, `off` never uses it.',
  });

/** Every setting, in the order they are parsed. */
export const SETTINGS: readonly Setting[] = declarations.list;

/** The parsed value of every setting, by variable name. */
export type SettingValues = typeof declarations extends Declarations<infer V> ? V : never;

/** The names of the settings. */
export const SETTING_NAMES: ReadonlySet<string> = new Set(SETTINGS.map((s) => s.name));

/**
 * Parses every setting from `env` in declaration order (a default may use the settings before it);
 * an empty variable counts as unset. Throws ConfigError naming the first bad variable.
 */
export function parseSettings(
  env: Readonly<Record<string, string | undefined>>,
  machine: Machine = currentMachine(),
): SettingValues {
  const values: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    const raw = env[setting.name];
    if (raw !== undefined && raw.trim() !== '') values[setting.name] = setting.kind.parse(raw, setting.name);
    else
      values[setting.name] =
        typeof setting.default === 'function'
          ? (setting.default as (e: typeof values, m: Machine) => unknown)(values, machine)
          : setting.default;
  }
  return values as SettingValues;
}

/** The machine this process runs on. */
export function currentMachine(): Machine {
  const machine = totalmem();
  const constrained = process.constrainedMemory?.() ?? 0;
  // constrainedMemory() is 0 (or an enormous "no limit" value) outside a memory cgroup.
  const bytesAvailable = constrained > 0 && constrained < machine ? constrained : machine;
  return { cores: Math.max(1, availableParallelism()), memoryMb: Math.floor(bytesAvailable / MiB) };
}

/**
 * The renderer memory bound when none is set: half the machine's memory, shared by the render slots
 * (each may print one document at its bound at once, so together they stay within half, leaving the
 * rest to the service, its database and the system), and never below 2048 MB: the V8 heap cap of a
 * renderer (1 GiB) plus 100 megapixels of decoded images (~400 MB), with room for the page itself.
 * A long document needs more than an invoice by far (docs/long-documents.md "Deadlines"), so a fixed
 * bound would refuse it on a machine with memory to spare.
 */
export function defaultRendererMemoryMb(memoryMb: number, concurrency: number): number {
  return Math.max(2048, Math.floor(memoryMb / 2 / Math.max(1, concurrency)));
}
