/**
 * The one typed configuration, and the only module that reads `process.env`.
 * Every default is written here; a bad value stops start-up with a message naming the variable.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';

export type Plan = 'free' | 'pro' | 'enterprise';
export const PLANS: readonly Plan[] = ['free', 'pro', 'enterprise'];

/** Requests allowed per window; `null` means unlimited. */
export interface RateLimitPolicy {
  perMinute: number | null;
  perDay: number | null;
}

export interface Config {
  readonly http: {
    /** @defaultValue 8080 (`PORT`) */
    readonly port: number;
    /** @defaultValue '0.0.0.0' (`PRESSROOM_HOST`) */
    readonly host: string;
    /** Base of download links. @defaultValue `http://localhost:<port>` (`PRESSROOM_PUBLIC_URL`) */
    readonly publicUrl: string;
    /**
     * Largest request body of the generation routes (`/v1/pdf/create`, `/v1/pdf/create-async`,
     * `/v1/image/create`, `/v1/templates/preview`), whose `data` may be large. @defaultValue 10 MiB (`PRESSROOM_BODY_LIMIT_BYTES`)
     */
    readonly bodyLimitBytes: number;
    /**
     * Largest body of template create and update. Above the 3.2 million characters of text the template
     * schema accepts (html 2 M, css 1 M, header and footer 100 k each), with room for JSON escapes,
     * fields and sample data. @defaultValue 4 MiB (`PRESSROOM_TEMPLATE_BODY_LIMIT_BYTES`)
     */
    readonly templateBodyLimitBytes: number;
    /** Largest body of every other route (S3 settings, API keys, admin). @defaultValue 64 KiB (`PRESSROOM_SMALL_BODY_LIMIT_BYTES`) */
    readonly smallBodyLimitBytes: number;
    /**
     * Large JSON bodies are parsed on worker threads, so they do not stall other requests
     * (src/http/json-body/, docs/operations.md "Large request bodies").
     */
    readonly jsonWorkers: {
      /**
       * Bodies larger than this are parsed on a parse thread; smaller ones on the event loop. 256 KiB:
       * that much JSON parses in ~1.3 ms as typical data and ~5 ms in the slowest shape (empty nested
       * arrays), a pause like one ordinary request's, whereas 10 MiB takes up to a second; and offloading
       * costs about twice the CPU in all (the thread parses, walks and cuts; the loop joins the pieces).
       * @defaultValue 256 KiB (`PRESSROOM_JSON_WORKER_THRESHOLD_BYTES`)
       */
      readonly thresholdBytes: number;
      /** Parse threads, started on the first large body. @defaultValue number of cores − 1, at least 1; at most the number of cores (`PRESSROOM_JSON_WORKER_THREADS`) */
      readonly threads: number;
      /** Large bodies that may wait for a parse thread (all accounts) before new ones get 503. @defaultValue 16 (`PRESSROOM_JSON_WORKER_QUEUE_LIMIT`) */
      readonly queueLimit: number;
      /**
       * Large bodies of one account waiting or being parsed at once before its next gets 429 (the line is
       * served round robin by account as well). @defaultValue 4 (`PRESSROOM_JSON_WORKER_ACCOUNT_LIMIT`)
       */
      readonly accountLimit: number;
      /**
       * Heap cap of each parse thread; a body whose parse would need more, by an estimate read off its
       * bytes first (the costliest shapes ~48 bytes of heap per byte of JSON), gets 413 without being
       * parsed (src/http/json-body/json-heap-estimate.ts). @defaultValue 64 × the generation body
       * limit in MiB, at least 256 (640 with the default 10 MiB) (`PRESSROOM_JSON_WORKER_MEMORY_MB`)
       */
      readonly memoryMb: number;
    };
    /** Largest body of the PDF tools: their base64 inputs, from `pdfTools.maxInputBytes` (× 4/3 + 1 MiB). */
    readonly pdfToolsBodyLimitBytes: number;
    /** Enables the admin API; absent → admin routes answer 404. (`PRESSROOM_ADMIN_TOKEN`) */
    readonly adminToken: string | undefined;
    /**
     * Bearer token `GET /metrics` requires, ≥ 16 characters; absent → /metrics is public on the same
     * port as the API (block it at the proxy, or set this). @defaultValue unset (`PRESSROOM_METRICS_TOKEN`)
     */
    readonly metricsToken: string | undefined;
  };
  readonly dataDir: string;
  readonly database: {
    /** `postgres://…` selects PostgreSQL; absent → SQLite at `<dataDir>/pressroom.db`. (`PRESSROOM_DATABASE_URL`) */
    readonly url: string | undefined;
    readonly dialect: 'sqlite' | 'postgres';
    readonly sqlitePath: string;
    /** @defaultValue 10 (`PRESSROOM_DATABASE_POOL_SIZE`) */
    readonly poolSize: number;
  };
  /** Shared rate-limit store for several processes; absent → in memory. (`PRESSROOM_REDIS_URL`) */
  readonly redisUrl: string | undefined;
  /** Master key for signing and secrets at rest. (`PRESSROOM_SECRET_KEY`, else generated into `<dataDir>/secret.key`) */
  readonly secretKey: string;
  /** Lets customer URLs (webhooks, S3 endpoints) reach private addresses. Development and tests only. */
  readonly allowPrivateNetworks: boolean;
  readonly logLevel: string;
  readonly storage: {
    /** `file:///abs/path` (default `<dataDir>/files`) or `s3://bucket/prefix?endpoint=…&region=…&force_path_style=true`. */
    readonly url: string;
    /** How often expired files are swept. @defaultValue 60 s (`PRESSROOM_SWEEP_INTERVAL_SECONDS`) */
    readonly sweepIntervalSeconds: number;
    /**
     * Where long PDFs wait between printing and delivery (pdf/spool.ts). @defaultValue
     * `<dataDir>/spool`, or the system's temporary directory's `pressroom-spool` when nothing else
     * uses the data directory (PostgreSQL, S3 and a given secret key) (`PRESSROOM_SPOOL_DIR`)
     */
    readonly spoolDir: string;
    /**
     * A PDF of at least this many bytes out of Chromium goes through a spool file instead of memory
     * (not PDF/A); 0 spools every PDF. @defaultValue 1 MiB (`PRESSROOM_PDF_SPOOL_BYTES`)
     */
    readonly spoolAboveBytes: number;
  };
  readonly rendering: {
    /** @defaultValue `/usr/bin/chromium` (`PRESSROOM_CHROMIUM_PATH`) */
    readonly chromiumPath: string;
    /** Documents rendered at once. @defaultValue number of cores (`PRESSROOM_RENDER_CONCURRENCY`) */
    readonly concurrency: number;
    /** Documents that may wait for a free page before new ones get 503. @defaultValue 100 (`PRESSROOM_RENDER_QUEUE_LIMIT`) */
    readonly queueLimit: number;
    /** Whole render (template + print) deadline. @defaultValue 30000 (`PRESSROOM_RENDER_TIMEOUT_MS`) */
    readonly timeoutMs: number;
    /**
     * Whole render deadline of an async job's document (create-async): long documents belong there.
     * @defaultValue 300000 (`PRESSROOM_ASYNC_RENDER_TIMEOUT_MS`)
     */
    readonly asyncTimeoutMs: number;
    /**
     * Estimated printing cost per page, tagged and untagged, by which a synchronous request is refused
     * early (DOCUMENT_TOO_LONG_FOR_SYNC) when its laid-out length would print past the render deadline;
     * 0 turns the check off. Measured, with margin, on a 2-core machine (docs/rendering.md "Long documents").
     * @defaultValue 120 / 50 (`PRESSROOM_PRINT_MS_PER_PAGE_TAGGED`, `PRESSROOM_PRINT_MS_PER_PAGE_UNTAGGED`)
     */
    readonly printMsPerPage: { readonly tagged: number; readonly untagged: number };
    /** Template evaluation deadline (inside the render deadline). @defaultValue 5000 (`PRESSROOM_TEMPLATE_TIMEOUT_MS`) */
    readonly templateTimeoutMs: number;
    /** Largest HTML a template may produce. @defaultValue 20 MiB (`PRESSROOM_TEMPLATE_OUTPUT_LIMIT_BYTES`) */
    readonly templateOutputLimitBytes: number;
    /** A browser is replaced after this many documents, to bound leaks. @defaultValue 2000 (`PRESSROOM_BROWSER_RECYCLE_AFTER`) */
    readonly recycleAfterRenders: number;
    /**
     * Where each document's template runs: a fresh SES Compartment in the locked-down evaluator
     * page (`compartment`), or a fresh Web Worker (`worker`: a new isolate per document, ~13 ms
     * more CPU each; docs/rendering.md). @defaultValue 'compartment' (`PRESSROOM_TEMPLATE_EVALUATOR`)
     */
    readonly evaluator: 'compartment' | 'worker';
    /**
     * Largest PDF Chromium may produce, counted as it is streamed out, before the preview stamp,
     * metadata and PDF/A (`DOCUMENT_TOO_LARGE`). Far above real documents (a 33-page tagged report
     * with images is ~6 MB), low enough that every render slot may hold one in memory at once.
     * @defaultValue 100 MiB (`PRESSROOM_MAX_DOCUMENT_BYTES`)
     */
    readonly maxDocumentBytes: number;
    /** Most pages a document may have; Chromium prints at most one more (`DOCUMENT_TOO_LARGE`). @defaultValue 2000 (`PRESSROOM_MAX_PAGES`) */
    readonly maxPages: number;
    /**
     * Most decoded pixels all of a document's images may have together, checked before printing
     * (`DOCUMENT_TOO_LARGE`). 100 megapixels is ~400 MB decoded, a dozen full-page 300 dpi A4 photos.
     * @defaultValue 100000000 (`PRESSROOM_MAX_IMAGE_PIXELS`)
     */
    readonly maxImagePixels: number;
    /**
     * A Chromium renderer or print compositor whose resident memory passes this is killed and its
     * render fails (`DOCUMENT_TOO_LARGE`). At least the 1 GiB V8 heap cap plus 100 megapixels of
     * images; on a larger machine, enough for long documents (`defaultRendererMemoryMb`).
     * @defaultValue half the machine's memory shared by the render slots, at least 2048 (`PRESSROOM_RENDERER_MEMORY_MB`)
     */
    readonly rendererMemoryMb: number;
  };
  /**
   * How render slots are shared between accounts (src/scheduling/fair-scheduler.ts, docs/rendering.md
   * "Fair rendering"). Per process, in memory.
   */
  readonly renderFairness: {
    /**
     * Render slots one account may hold while another account's render waits, so one busy account
     * leaves slots to the others; a slot nobody else waits for goes to it all the same (work-conserving).
     * @defaultValue rendering concurrency − 1, at least 1 (`PRESSROOM_RENDER_ACCOUNT_SLOTS`)
     */
    readonly accountSlots: number;
    /** Render slots previews may hold at once, all accounts together. @defaultValue half the rendering concurrency, at least 1 (`PRESSROOM_RENDER_PREVIEW_SLOTS`) */
    readonly previewSlots: number;
    /** Renders one account may have waiting for a slot before it gets 429 `RATE_LIMITED`. @defaultValue a quarter of the render queue limit, at least 1 (`PRESSROOM_RENDER_ACCOUNT_QUEUE_LIMIT`) */
    readonly accountQueueLimit: number;
    /** Previews one account may have waiting for a slot before it gets 429 `RATE_LIMITED`. @defaultValue 2 (`PRESSROOM_RENDER_PREVIEW_QUEUE_LIMIT`) */
    readonly accountPreviewQueueLimit: number;
    /**
     * Render time one account's failed and timed-out renders (free of charge) may take per window;
     * past it, its renders wait behind every other account's. @defaultValue 60 (`PRESSROOM_RENDER_FAILURE_BUDGET_SECONDS`)
     */
    readonly failureBudgetSeconds: number;
    /** The sliding window of that budget. @defaultValue 600 (`PRESSROOM_RENDER_FAILURE_WINDOW_SECONDS`) */
    readonly failureWindowSeconds: number;
  };
  readonly plans: Readonly<Record<Plan, RateLimitPolicy>>;
  /**
   * A synchronous generation's reserved credit and its Idempotency-Key are held by their process under
   * this lease, renewed every third of it; when the process dies, any process voids the credit and
   * frees the key once the lease has run out (docs/generation.md). @defaultValue 30000 (`PRESSROOM_REQUEST_LEASE_MS`)
   */
  readonly requestLeaseMs: number;
  readonly jobs: {
    /** Jobs one process renders at once. @defaultValue rendering concurrency (`PRESSROOM_WORKER_CONCURRENCY`) */
    readonly workerConcurrency: number;
    /** A claimed job returns to the queue when its lease runs out. @defaultValue 60000 (`PRESSROOM_JOB_LEASE_MS`) */
    readonly leaseMs: number;
    /** Attempts before a transient failure becomes permanent. @defaultValue 5 (`PRESSROOM_JOB_MAX_ATTEMPTS`) */
    readonly maxAttempts: number;
    /** First retry delay after a transient failure; doubles per attempt, with jitter. @defaultValue 2000 (`PRESSROOM_JOB_RETRY_BASE_DELAY_MS`) */
    readonly retryBaseDelayMs: number;
    /** Polling fallback when no wake-up arrives. @defaultValue 1000 (`PRESSROOM_JOB_POLL_MS`) */
    readonly pollIntervalMs: number;
    /** SIGTERM: in-flight jobs may finish within this deadline. @defaultValue 30000 (`PRESSROOM_SHUTDOWN_GRACE_MS`) */
    readonly shutdownGraceMs: number;
    /**
     * Finished jobs (with their data and webhook records) are deleted this many days after they
     * finished; 0 keeps them forever. @defaultValue 30 (`PRESSROOM_JOB_RETENTION_DAYS`)
     */
    readonly retentionDays: number;
  };
  readonly webhooks: {
    /** @defaultValue 10000 (`PRESSROOM_WEBHOOK_TIMEOUT_MS`) */
    readonly timeoutMs: number;
    /** @defaultValue 8 (`PRESSROOM_WEBHOOK_MAX_ATTEMPTS`) */
    readonly maxAttempts: number;
    /** First retry delay; doubles per attempt with jitter. @defaultValue 30000 (`PRESSROOM_WEBHOOK_BASE_DELAY_MS`) */
    readonly baseDelayMs: number;
    /**
     * Deliveries of one account in flight at once (all processes together), so a receiver that never
     * answers delays only its own account's webhooks. @defaultValue 4 (`PRESSROOM_WEBHOOK_ACCOUNT_CONCURRENCY`)
     */
    readonly accountConcurrency: number;
  };
  readonly preview: {
    /** Free previews per account and minute (studio). @defaultValue 30 (`PRESSROOM_PREVIEW_PER_MINUTE`) */
    readonly perMinute: number;
  };
  /** `POST /v1/pdf-tools/*`: merge, extract pages, rotate (docs/pdf-tools.md). */
  readonly pdfTools: {
    /**
     * Bytes of PDF one request may bring, all its inputs together (base64 decoded, URLs downloaded).
     * The routes' body limit follows from it (base64 is 4/3 of the bytes, plus 1 MiB for the rest of
     * the JSON). @defaultValue 50 MiB (`PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES`)
     */
    readonly maxInputBytes: number;
    /** Pages of any one input and of the result. @defaultValue 2000 (`PRESSROOM_PDF_TOOLS_MAX_PAGES`) */
    readonly maxPages: number;
    /** PDFs one merge may combine. @defaultValue 20 (`PRESSROOM_PDF_TOOLS_MAX_MERGE_INPUTS`) */
    readonly maxMergeInputs: number;
    /** Deadline of one `pdf_url` download, redirects included. @defaultValue 15000 (`PRESSROOM_PDF_TOOLS_FETCH_TIMEOUT_MS`) */
    readonly fetchTimeoutMs: number;
    /** Deadline of one qpdf run; past it the process is killed and nothing is charged. @defaultValue 60000 (`PRESSROOM_PDF_TOOLS_TIMEOUT_MS`) */
    readonly timeoutMs: number;
    /** qpdf processes one server process runs at once; more requests wait. @defaultValue number of cores (`PRESSROOM_PDF_TOOLS_CONCURRENCY`) */
    readonly concurrency: number;
  };
  /** The asset library (docs/assets.md): logos, fonts and stylesheets per account, in the blob store. */
  readonly assets: {
    /** Largest asset. @defaultValue 10 MiB (`PRESSROOM_ASSET_MAX_BYTES`) */
    readonly maxBytes: number;
    /** All of one account's assets together. @defaultValue 200 MiB (`PRESSROOM_ASSET_ACCOUNT_MAX_BYTES`) */
    readonly accountMaxBytes: number;
    /** Asset bytes kept in memory per process for rendering. @defaultValue 64 MiB (`PRESSROOM_ASSET_CACHE_BYTES`) */
    readonly cacheBytes: number;
  };
  /**
   * Remote images, fonts and stylesheets documents name (docs/assets.md "Remote resources"), fetched
   * by the service through the outbound guard. Private, loopback and link-local addresses are never
   * reached, whatever `allowPrivateNetworks` says, except the hosts named in `hosts`.
   */
  readonly remoteResources: {
    /** @defaultValue true (`PRESSROOM_REMOTE_RESOURCES=on|off`) */
    readonly enabled: boolean;
    /** `host` or `host:port` entries documents may reach even on private addresses. @defaultValue none (`PRESSROOM_REMOTE_RESOURCE_HOSTS`) */
    readonly hosts: readonly string[];
    /** Largest resource. @defaultValue 5 MiB (`PRESSROOM_REMOTE_RESOURCE_MAX_BYTES`) */
    readonly maxBytes: number;
    /** One resource's deadline, redirects included. @defaultValue 5000 ms (`PRESSROOM_REMOTE_RESOURCE_TIMEOUT_MS`) */
    readonly timeoutMs: number;
    /** Remote resources one document may load. @defaultValue 50 (`PRESSROOM_REMOTE_RESOURCES_PER_DOCUMENT`) */
    readonly maxPerDocument: number;
    /** Bytes of remote resources one document may load. @defaultValue 20 MiB (`PRESSROOM_REMOTE_RESOURCE_DOCUMENT_MAX_BYTES`) */
    readonly documentMaxBytes: number;
    /** Time one document may spend fetching, from its first fetch. @defaultValue 10000 ms (`PRESSROOM_REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS`) */
    readonly documentTimeoutMs: number;
    /** The shared in-process cache. @defaultValue 64 MiB (`PRESSROOM_REMOTE_RESOURCE_CACHE_BYTES`) */
    readonly cacheBytes: number;
  };
  /** `image_url`s of image modifications, downloaded through the outbound guard (docs/images.md). */
  readonly images: {
    /** Bytes all image downloads of one image request may take together. @defaultValue 10 MiB (`PRESSROOM_IMAGE_URL_MAX_BYTES`) */
    readonly urlMaxBytes: number;
    /** Time all image downloads of one image request may take together. @defaultValue 10000 (`PRESSROOM_IMAGE_URL_TIMEOUT_MS`) */
    readonly urlTimeoutMs: number;
  };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number between ${min} and ${max}; got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}; got ${value}`);
  return value;
}

function readLimit(env: Env, name: string, fallback: number | null): number | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw.trim().toLowerCase() === 'unlimited') return null;
  return readInt(env, name, 0, 1);
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new ConfigError(`${name} must be true or false; got "${raw}"`);
}

/** `on`/`off` (also true/false, 1/0). */
function readOnOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['on', 'true', '1', 'yes'].includes(raw)) return true;
  if (['off', 'false', '0', 'no'].includes(raw)) return false;
  throw new Error(`${name} must be on or off; got ${env[name]}`);
}

/** `host[:port],…` (lower case; IPv6 literals in brackets). */
function readHostList(env: Env, name: string): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry) => {
    const host = entry.trim().toLowerCase();
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(host)) throw new Error(`${name} must list host or host:port entries separated by commas; got "${entry.trim()}"`);
    return host;
  });
}

function readEvaluator(env: Env): Config['rendering']['evaluator'] {
  const raw = env.PRESSROOM_TEMPLATE_EVALUATOR?.trim() || 'compartment';
  if (raw !== 'compartment' && raw !== 'worker') {
    throw new ConfigError(`PRESSROOM_TEMPLATE_EVALUATOR must be compartment or worker; got "${raw}"`);
  }
  return raw;
}

function readUrl(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(', ')}); got an unparsable value`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}; got ${url.protocol}//…`);
  }
  return raw;
}

/** Reads the master key, or creates one in the data dir on first start (embedded default). */
function readSecretKey(env: Env, dataDir: string): string {
  const given = env.PRESSROOM_SECRET_KEY;
  if (given !== undefined && given !== '') {
    if (given.length < 32) throw new ConfigError('PRESSROOM_SECRET_KEY must be at least 32 characters (for example `openssl rand -hex 32`)');
    return given;
  }
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

/**
 * The renderer memory bound when none is set: half the machine's memory, shared by the render slots
 * (each may print one document at its bound at once, so together they stay within half, leaving the
 * rest to the service, its database and the system), and never below 2048 MB: the V8 heap cap of a
 * renderer (1 GiB) plus 100 megapixels of decoded images (~400 MB), with room for the page itself.
 * A long document needs more than an invoice by far — the peers' 330-page report, its ledger written
 * as tables of 500 rows, takes ~3.7 GB in its renderer — so a fixed 2 GB refused it on a machine with
 * 24 GB to spare, where this gives 6 GB with two slots.
 */
export function defaultRendererMemoryMb(memoryMb: number, concurrency: number): number {
  return Math.max(2048, Math.floor(memoryMb / 2 / Math.max(1, concurrency)));
}

/** The memory this process may count on: the machine's, or its cgroup's limit (a container) when lower. */
function machineMemoryMb(): number {
  const machine = totalmem();
  const constrained = process.constrainedMemory?.() ?? 0;
  // constrainedMemory() is 0 (or an enormous "no limit" value) outside a memory cgroup.
  const bytes = constrained > 0 && constrained < machine ? constrained : machine;
  return Math.floor(bytes / (1024 * 1024));
}

/** What `loadConfig` may do to the file system. */
export interface LoadOptions {
  /**
   * Create the data directory (and the master key in it) when it does not exist. `serve` does; the
   * admin commands do only with `--init`: run from the wrong directory they would otherwise create a
   * second, empty installation and print keys the running server rejects.
   */
  readonly createDataDir?: boolean;
}

export function loadConfig(env: Env = process.env, options: LoadOptions = {}): Config {
  const port = readInt(env, 'PORT', 8080, 0, 65535);
  const dataDir = resolve(env.PRESSROOM_DATA_DIR || './data');
  const databaseUrl = readUrl(env, 'PRESSROOM_DATABASE_URL', ['postgres:', 'postgresql:']);
  const usesDataDir = !databaseUrl || !env.PRESSROOM_SECRET_KEY || !env.PRESSROOM_STORAGE_URL;
  if (options.createDataDir === false && usesDataDir && !existsSync(dataDir)) {
    throw new ConfigError(`there is no data directory at ${dataDir} (PRESSROOM_DATA_DIR, default ./data). ` +
      'Run the command where the server runs or set PRESSROOM_DATA_DIR to its data directory; pass --init to create a new one.');
  }
  const cores = Math.max(1, availableParallelism());
  const concurrency = readInt(env, 'PRESSROOM_RENDER_CONCURRENCY', cores, 1, 64);
  const publicUrl = (readUrl(env, 'PRESSROOM_PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const queueLimit = readInt(env, 'PRESSROOM_RENDER_QUEUE_LIMIT', 100, 0);
  const renderTimeoutMs = readInt(env, 'PRESSROOM_RENDER_TIMEOUT_MS', 30_000, 100);
  const asyncRenderTimeoutMs = readInt(env, 'PRESSROOM_ASYNC_RENDER_TIMEOUT_MS', 300_000, 100);
  const storageUrl = readUrl(env, 'PRESSROOM_STORAGE_URL', ['file:', 's3:']) ?? pathToFileURL(join(dataDir, 'files')).href;
  const adminToken = env.PRESSROOM_ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('PRESSROOM_ADMIN_TOKEN must be at least 16 characters');
  }
  const pdfToolsMaxInputBytes = readInt(env, 'PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES', 50 * 1024 * 1024, 1024, 1024 * 1024 * 1024);
  const metricsToken = env.PRESSROOM_METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError('PRESSROOM_METRICS_TOKEN must be at least 16 characters (for example `openssl rand -hex 24`)');
  }
  const bodyLimitBytes = readInt(env, 'PRESSROOM_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024);
  const rendererMemoryMb = readInt(env, 'PRESSROOM_RENDERER_MEMORY_MB', defaultRendererMemoryMb(machineMemoryMb(), concurrency), 64);
  const config: Config = {
    http: {
      port,
      host: env.PRESSROOM_HOST || '0.0.0.0',
      publicUrl,
      bodyLimitBytes,
      templateBodyLimitBytes: readInt(env, 'PRESSROOM_TEMPLATE_BODY_LIMIT_BYTES', 4 * 1024 * 1024, 1024),
      smallBodyLimitBytes: readInt(env, 'PRESSROOM_SMALL_BODY_LIMIT_BYTES', 64 * 1024, 1024),
      jsonWorkers: {
        thresholdBytes: readInt(env, 'PRESSROOM_JSON_WORKER_THRESHOLD_BYTES', 256 * 1024, 1024),
        threads: readInt(env, 'PRESSROOM_JSON_WORKER_THREADS', Math.max(1, cores - 1), 1, cores),
        queueLimit: readInt(env, 'PRESSROOM_JSON_WORKER_QUEUE_LIMIT', 16, 0, 10_000),
        accountLimit: readInt(env, 'PRESSROOM_JSON_WORKER_ACCOUNT_LIMIT', 4, 1, 10_000),
        memoryMb: readInt(env, 'PRESSROOM_JSON_WORKER_MEMORY_MB', Math.max(256, 64 * Math.ceil(bodyLimitBytes / (1024 * 1024))), 64, 65_536),
      },
      pdfToolsBodyLimitBytes: Math.ceil((pdfToolsMaxInputBytes * 4) / 3) + 1024 * 1024,
      adminToken,
      metricsToken,
    },
    dataDir,
    database: {
      url: databaseUrl,
      dialect: databaseUrl ? 'postgres' : 'sqlite',
      sqlitePath: join(dataDir, 'pressroom.db'),
      poolSize: readInt(env, 'PRESSROOM_DATABASE_POOL_SIZE', 10, 1, 200),
    },
    redisUrl: readUrl(env, 'PRESSROOM_REDIS_URL', ['redis:', 'rediss:']),
    secretKey: readSecretKey(env, dataDir),
    allowPrivateNetworks: readBool(env, 'PRESSROOM_ALLOW_PRIVATE_NETWORKS', false),
    logLevel: env.PRESSROOM_LOG_LEVEL || 'info',
    storage: {
      url: storageUrl,
      sweepIntervalSeconds: readInt(env, 'PRESSROOM_SWEEP_INTERVAL_SECONDS', 60, 1),
      spoolDir: resolve(env.PRESSROOM_SPOOL_DIR || (usesDataDir ? join(dataDir, 'spool') : join(tmpdir(), 'pressroom-spool'))),
      spoolAboveBytes: readInt(env, 'PRESSROOM_PDF_SPOOL_BYTES', 1024 * 1024, 0),
    },
    rendering: {
      chromiumPath: env.PRESSROOM_CHROMIUM_PATH || '/usr/bin/chromium',
      concurrency,
      queueLimit,
      timeoutMs: renderTimeoutMs,
      templateTimeoutMs: readInt(env, 'PRESSROOM_TEMPLATE_TIMEOUT_MS', 5_000, 50),
      asyncTimeoutMs: asyncRenderTimeoutMs,
      printMsPerPage: {
        tagged: readInt(env, 'PRESSROOM_PRINT_MS_PER_PAGE_TAGGED', 120, 0, 600_000),
        untagged: readInt(env, 'PRESSROOM_PRINT_MS_PER_PAGE_UNTAGGED', 50, 0, 600_000),
      },
      templateOutputLimitBytes: readInt(env, 'PRESSROOM_TEMPLATE_OUTPUT_LIMIT_BYTES', 20 * 1024 * 1024, 1024),
      recycleAfterRenders: readInt(env, 'PRESSROOM_BROWSER_RECYCLE_AFTER', 2000, 1),
      evaluator: readEvaluator(env),
      maxDocumentBytes: readInt(env, 'PRESSROOM_MAX_DOCUMENT_BYTES', 100 * 1024 * 1024, 1024),
      maxPages: readInt(env, 'PRESSROOM_MAX_PAGES', 2000, 1, 1_000_000),
      maxImagePixels: readInt(env, 'PRESSROOM_MAX_IMAGE_PIXELS', 100_000_000, 1),
      rendererMemoryMb,
    },
    renderFairness: {
      accountSlots: readInt(env, 'PRESSROOM_RENDER_ACCOUNT_SLOTS', Math.max(1, concurrency - 1), 1, 64),
      previewSlots: readInt(env, 'PRESSROOM_RENDER_PREVIEW_SLOTS', Math.max(1, Math.floor(concurrency / 2)), 1, 64),
      accountQueueLimit: readInt(env, 'PRESSROOM_RENDER_ACCOUNT_QUEUE_LIMIT', Math.max(1, Math.floor(queueLimit / 4)), 0),
      accountPreviewQueueLimit: readInt(env, 'PRESSROOM_RENDER_PREVIEW_QUEUE_LIMIT', 2, 0),
      failureBudgetSeconds: readInt(env, 'PRESSROOM_RENDER_FAILURE_BUDGET_SECONDS', 60, 1),
      failureWindowSeconds: readInt(env, 'PRESSROOM_RENDER_FAILURE_WINDOW_SECONDS', 600, 1, 86_400),
    },
    plans: {
      free: {
        perMinute: readLimit(env, 'PRESSROOM_PLAN_FREE_PER_MINUTE', 60),
        perDay: readLimit(env, 'PRESSROOM_PLAN_FREE_PER_DAY', 1000),
      },
      pro: {
        perMinute: readLimit(env, 'PRESSROOM_PLAN_PRO_PER_MINUTE', 120),
        perDay: readLimit(env, 'PRESSROOM_PLAN_PRO_PER_DAY', 10_000),
      },
      enterprise: {
        perMinute: readLimit(env, 'PRESSROOM_PLAN_ENTERPRISE_PER_MINUTE', null),
        perDay: readLimit(env, 'PRESSROOM_PLAN_ENTERPRISE_PER_DAY', null),
      },
    },
    requestLeaseMs: readInt(env, 'PRESSROOM_REQUEST_LEASE_MS', 30_000, 1000, 3_600_000),
    jobs: {
      workerConcurrency: readInt(env, 'PRESSROOM_WORKER_CONCURRENCY', concurrency, 1, 64),
      leaseMs: readInt(env, 'PRESSROOM_JOB_LEASE_MS', 60_000, 1000),
      maxAttempts: readInt(env, 'PRESSROOM_JOB_MAX_ATTEMPTS', 5, 1, 100),
      retryBaseDelayMs: readInt(env, 'PRESSROOM_JOB_RETRY_BASE_DELAY_MS', 2000, 1),
      pollIntervalMs: readInt(env, 'PRESSROOM_JOB_POLL_MS', 1000, 10),
      shutdownGraceMs: readInt(env, 'PRESSROOM_SHUTDOWN_GRACE_MS', 30_000, 0),
      retentionDays: readInt(env, 'PRESSROOM_JOB_RETENTION_DAYS', 30, 0, 3650),
    },
    webhooks: {
      timeoutMs: readInt(env, 'PRESSROOM_WEBHOOK_TIMEOUT_MS', 10_000, 100),
      maxAttempts: readInt(env, 'PRESSROOM_WEBHOOK_MAX_ATTEMPTS', 8, 1, 50),
      baseDelayMs: readInt(env, 'PRESSROOM_WEBHOOK_BASE_DELAY_MS', 30_000, 1),
      accountConcurrency: readInt(env, 'PRESSROOM_WEBHOOK_ACCOUNT_CONCURRENCY', 4, 1, 1000),
    },
    preview: {
      perMinute: readInt(env, 'PRESSROOM_PREVIEW_PER_MINUTE', 30, 1),
    },
    pdfTools: {
      maxInputBytes: pdfToolsMaxInputBytes,
      maxPages: readInt(env, 'PRESSROOM_PDF_TOOLS_MAX_PAGES', 2000, 1, 100_000),
      maxMergeInputs: readInt(env, 'PRESSROOM_PDF_TOOLS_MAX_MERGE_INPUTS', 20, 2, 1000),
      fetchTimeoutMs: readInt(env, 'PRESSROOM_PDF_TOOLS_FETCH_TIMEOUT_MS', 15_000, 100),
      timeoutMs: readInt(env, 'PRESSROOM_PDF_TOOLS_TIMEOUT_MS', 60_000, 100),
      concurrency: readInt(env, 'PRESSROOM_PDF_TOOLS_CONCURRENCY', cores, 1, 64),
    },
    assets: {
      maxBytes: readInt(env, 'PRESSROOM_ASSET_MAX_BYTES', 10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
      accountMaxBytes: readInt(env, 'PRESSROOM_ASSET_ACCOUNT_MAX_BYTES', 200 * 1024 * 1024, 1024),
      cacheBytes: readInt(env, 'PRESSROOM_ASSET_CACHE_BYTES', 64 * 1024 * 1024, 0),
    },
    remoteResources: {
      enabled: readOnOff(env, 'PRESSROOM_REMOTE_RESOURCES', true),
      hosts: readHostList(env, 'PRESSROOM_REMOTE_RESOURCE_HOSTS'),
      maxBytes: readInt(env, 'PRESSROOM_REMOTE_RESOURCE_MAX_BYTES', 5 * 1024 * 1024, 1024),
      timeoutMs: readInt(env, 'PRESSROOM_REMOTE_RESOURCE_TIMEOUT_MS', 5000, 100, 120_000),
      maxPerDocument: readInt(env, 'PRESSROOM_REMOTE_RESOURCES_PER_DOCUMENT', 50, 0, 10_000),
      documentMaxBytes: readInt(env, 'PRESSROOM_REMOTE_RESOURCE_DOCUMENT_MAX_BYTES', 20 * 1024 * 1024, 1024),
      documentTimeoutMs: readInt(env, 'PRESSROOM_REMOTE_RESOURCE_DOCUMENT_TIMEOUT_MS', 10_000, 100, 600_000),
      cacheBytes: readInt(env, 'PRESSROOM_REMOTE_RESOURCE_CACHE_BYTES', 64 * 1024 * 1024, 0),
    },
    images: {
      urlMaxBytes: readInt(env, 'PRESSROOM_IMAGE_URL_MAX_BYTES', 10 * 1024 * 1024, 1024, 100 * 1024 * 1024),
      urlTimeoutMs: readInt(env, 'PRESSROOM_IMAGE_URL_TIMEOUT_MS', 10_000, 100, 120_000),
    },
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
