/**
 * Prometheus metrics of one process (prom-client, text format at `GET /metrics`).
 *
 * Three kinds of source:
 * - events counted where they happen: HTTP requests (an onResponse hook), renders and credits (the
 *   decorators in `instrument.ts`), job attempts and webhook attempts (the workers' `metrics` port);
 * - state read at scrape time: queue depth and the oldest due job (two indexed queries on the job
 *   table, bounded by `SCRAPE_QUERY_TIMEOUT_MS`), the browser's launch and crash counters
 *   (`renderer.stats()`), each pool of heavy work's slots in use and tasks waiting, Redis' connection state;
 * - prom-client's default process metrics (CPU, memory, event loop lag, GC, handles).
 *
 * Each process has its own registry: scrape every API and worker process. The queue gauges come from
 * the shared database, so every process reports the same value; aggregate them with `max`, not `sum`.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** A snapshot of the job and webhook queues (see `JobService.queueStats`). */
export interface QueueSnapshot {
  pending: number;
  processing: number;
  /** How long the longest-waiting due job has waited (now − run_at), 0 when none is due. */
  oldestDueAgeMs: number;
  webhooksPending: number;
  /** Credits reserved by generations not yet delivered or voided (charges.ts). */
  reservationsPending: number;
  /** Pending jobs per account, the accounts with the most (at most 20). */
  pendingByAccount?: readonly { accountId: string; pending: number }[];
}

/** What the scrape-time collectors read. */
export interface MetricSources {
  queueStats(): Promise<QueueSnapshot>;
  rendererStats(): {
    launches: number;
    crashes: number;
    active: number;
    queued: number;
    ready: boolean;
    /** Renders waiting, per account that has any (fair render queue). */
    queuedByAccount?: ReadonlyMap<string, number>;
    /** Accounts whose failed render time is over their budget. */
    accountsOverFailureBudget?: number;
    /** Renders tried once more on fresh pages after a page's renderer crashed. */
    pageCrashRetries?: number;
  };
  /** The pools of heavy work this process has (render slots, qpdf, xmllint…), read at scrape time. */
  pools?(): readonly PoolSnapshot[];
  /** Redis connection state; undefined when no Redis is configured. */
  redisReady?(): boolean;
}

/** One pool of heavy work (scheduling/fair-scheduler.ts): its name, its slots, those in use and the tasks waiting. */
export interface PoolSnapshot {
  pool: string;
  capacity: number;
  active: number;
  waiting: number;
  /** Tasks granted a slot since the pool was made (exported as a counter). */
  started: number;
}

/** How a job attempt ended, as the worker counts it. */
export type JobAttemptOutcome = 'completed' | 'failed' | 'retry';
/** How a webhook attempt ended: delivered, failed for good, or failed with a retry scheduled. */
export type WebhookAttemptOutcome = 'delivered' | 'failed' | 'retry';

/** How an offloaded JSON parse ended: parsed, invalid (422), refused (a pool bound: 413, 429, 503) or failed (500). */
export type OffloadedJsonParseOutcome = 'parsed' | 'invalid' | 'refused' | 'failed';

/** The counting side, passed to the HTTP layer, the decorators and the workers. */
export interface Metrics {
  readonly registry: Registry;
  httpRequest(input: { method: string; route: string; status: number; seconds: number }): void;
  render(input: { kind: 'document' | 'preview' | 'image'; outcome: string; seconds: number }): void;
  /** A document went past one of its bounds (DOCUMENT_TOO_LARGE): bytes, pages, image_pixels, memory or header_footer. */
  documentBoundHit(bound: string): void;
  /** One PDF through compaction (finishing/pdf-compaction.ts): how it ended, its size before and after, the time taken. */
  /** `spooled`: the PDF was compacted from a spool file (a long one, pdf/spool.ts), not in memory. */
  compaction(input: {
    outcome: string;
    bytesBefore: number;
    bytesAfter: number;
    seconds: number;
    spooled?: boolean;
  }): void;
  credits(type: 'PDFGEN' | 'REFUND' | 'PURCHASE' | 'BONUS', credits: number): void;
  jobAttempt(outcome: JobAttemptOutcome): void;
  webhookAttempt(outcome: WebhookAttemptOutcome): void;
  /** A remote image, font or stylesheet a document asked for, by outcome (rendering/resources/remote-fetcher.ts). */
  remoteResource(outcome: string): void;
  /** A large JSON body parsed on a parse thread (http/json-body): how it ended, and its wait plus parse time. */
  offloadedJsonParse(outcome: OffloadedJsonParseOutcome, seconds: number): void;
  /** Reads the parse threads' state at scrape time (the HTTP app calls it once its pool exists). */
  watchJsonParsePool(stats: () => { running: number; waiting: number }): void;
  /** Adds pools to read at scrape time, beside `MetricSources.pools` (the HTTP app's); the function returned stops reading them. */
  watchPools(pools: () => readonly PoolSnapshot[]): () => void;
  /** Starts the scrape-time collectors (services.ts calls it once its sources exist). */
  collectFrom(sources: MetricSources): void;
  /** The text exposition, and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** A scrape never waits longer than this for the database. */
const SCRAPE_QUERY_TIMEOUT_MS = 2000;
/** Per-account render queue series exported at most: the accounts with the most renders waiting. */
const ACCOUNT_SERIES_LIMIT = 20;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Creates the registry and every metric; default process metrics are on. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const httpRequests = new Counter({
    name: 'pressroom_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'pressroom_http_request_duration_seconds',
    help: 'HTTP request duration (first byte in to last byte out), by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const renders = new Counter({
    name: 'pressroom_renders_total',
    help: 'Renders by kind (document, preview or image) and outcome (ok, or the error code in lower case)',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const renderDuration = new Histogram({
    name: 'pressroom_render_duration_seconds',
    help: 'Duration of successful renders, queueing for a page slot included',
    labelNames: ['kind'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers,
  });
  const documentBoundsHit = new Counter({
    name: 'pressroom_document_bounds_hit_total',
    help: 'Renders stopped with DOCUMENT_TOO_LARGE, by the bound the document went past: bytes, pages, image_pixels, memory, layers or header_footer',
    labelNames: ['bound'] as const,
    registers,
  });
  const compactions = new Counter({
    name: 'pressroom_pdf_compactions_total',
    help: 'PDFs through compaction, by outcome: compacted, skipped (a file it does not handle, or no smaller), timeout or failed (the file left as it was)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const compactionBytes = new Counter({
    name: 'pressroom_pdf_compaction_bytes_total',
    help: 'Bytes of the PDFs through compaction, before and after (after = before when it was not compacted)',
    labelNames: ['stage'] as const,
    registers,
  });
  const compactionSaved = new Counter({
    name: 'pressroom_pdf_compaction_bytes_saved_total',
    help: 'Bytes compaction took off the PDFs',
    registers,
  });
  const spooledPdfs = new Counter({
    name: 'pressroom_pdf_spooled_total',
    help: 'PDFs that went from printing to delivery through a spool file on disk instead of memory (at least the spool threshold, pdf/spool.ts; not PDF/A)',
    registers,
  });
  const compactionDuration = new Histogram({
    name: 'pressroom_pdf_compaction_duration_seconds',
    help: 'Time from handing a PDF to compaction to getting it back, waiting for a thread included',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const creditsConsumed = new Counter({
    name: 'pressroom_credits_consumed_total',
    help: 'Credits taken by generations (PDFGEN)',
    registers,
  });
  const creditsRefunded = new Counter({
    name: 'pressroom_credits_refunded_total',
    help: 'Credits given back after failed generations (REFUND)',
    registers,
  });
  const creditsGranted = new Counter({
    name: 'pressroom_credits_granted_total',
    help: 'Credits added (PURCHASE and BONUS)',
    labelNames: ['type'] as const,
    registers,
  });
  const jobAttempts = new Counter({
    name: 'pressroom_job_attempts_total',
    help: 'Job attempts finished by this process: completed, failed (for good, refunded) or retry (transient failure)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const remoteResources = new Counter({
    name: 'pressroom_remote_resources_total',
    help: 'Remote images, fonts and stylesheets documents asked for, by outcome: fetched, cached, blocked, failed, timeout, too_large, wrong_type, disabled, document_limit',
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookAttempts = new Counter({
    name: 'pressroom_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, will retry) or failed (gave up)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const offloadedJsonParses = new Histogram({
    name: 'pressroom_json_offloaded_parse_seconds',
    help: 'JSON bodies over the parse-thread threshold (http/json-body/json-body-bounds.ts) parsed on a parse thread, by outcome (parsed, invalid, refused, failed): waiting for a thread plus parsing',
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  let jsonParsePool: (() => { running: number; waiting: number }) | undefined;
  new Gauge({
    name: 'pressroom_json_parse_threads',
    help: 'Large JSON bodies being parsed on a parse thread (state="running") and waiting for one (state="waiting")',
    labelNames: ['state'] as const,
    registers,
    collect() {
      if (!jsonParsePool) return;
      const stats = jsonParsePool();
      this.set({ state: 'running' }, stats.running);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });

  let sources: MetricSources | undefined;
  let lastSnapshot: QueueSnapshot | undefined;
  let databaseUp = 0;
  // The registry reads its metrics concurrently: the four queue gauges share one query per scrape.
  let reading: Promise<void> | undefined;
  const readQueue = (): Promise<void> => {
    reading ??= (async () => {
      if (!sources) return;
      try {
        lastSnapshot = await withTimeout(sources.queueStats(), SCRAPE_QUERY_TIMEOUT_MS);
        databaseUp = 1;
      } catch {
        databaseUp = 0;
      }
    })().finally(() => (reading = undefined));
    return reading;
  };
  new Gauge({
    name: 'pressroom_database_up',
    help: '1 when the scrape-time queue query answered, 0 when it failed (the queue gauges then keep their last value)',
    registers,
    async collect() {
      await readQueue();
      this.set(databaseUp);
    },
  });
  new Gauge({
    name: 'pressroom_jobs_queued',
    help: 'Jobs in the queue by status (pending or processing), read from the database at scrape time',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      await readQueue();
      if (!lastSnapshot) return;
      this.set({ status: 'pending' }, lastSnapshot.pending);
      this.set({ status: 'processing' }, lastSnapshot.processing);
    },
  });
  new Gauge({
    name: 'pressroom_jobs_pending_by_account',
    help: `Pending jobs per account (retries waiting for their back-off included); only accounts with some, at most the ${ACCOUNT_SERIES_LIMIT} with the most`,
    labelNames: ['account_id'] as const,
    registers,
    async collect() {
      await readQueue();
      if (!lastSnapshot?.pendingByAccount) return;
      // Reset first: an account whose jobs have all started must disappear, not keep its last value.
      this.reset();
      for (const { accountId, pending } of lastSnapshot.pendingByAccount.slice(0, ACCOUNT_SERIES_LIMIT))
        this.set({ account_id: accountId }, pending);
    },
  });
  new Gauge({
    name: 'pressroom_jobs_oldest_pending_age_seconds',
    help: 'How long the longest-waiting due pending job has waited (now - run_at; 0 when none is due)',
    registers,
    async collect() {
      await readQueue();
      if (lastSnapshot) this.set(lastSnapshot.oldestDueAgeMs / 1000);
    },
  });
  new Gauge({
    name: 'pressroom_credit_reservations_pending',
    help: 'Credits reserved by generations in progress (sync requests and queued jobs); one left by a dead process is voided after its lease',
    registers,
    async collect() {
      await readQueue();
      if (lastSnapshot) this.set(lastSnapshot.reservationsPending);
    },
  });
  new Gauge({
    name: 'pressroom_webhook_deliveries_pending',
    help: 'Webhook deliveries not yet delivered or given up',
    registers,
    async collect() {
      await readQueue();
      if (lastSnapshot) this.set(lastSnapshot.webhooksPending);
    },
  });

  // Counters the renderer keeps itself: exported as counters by adding what changed since the last
  // look (each of the looks, since the registry reads them in no fixed order).
  const seen = { launches: 0, crashes: 0, pageCrashRetries: 0 };
  const launches = new Counter({
    name: 'pressroom_browser_launches_total',
    help: 'Chromium launches (the first, crash replacements and recycling)',
    registers,
    collect: syncBrowserCounters,
  });
  const restarts = new Counter({
    name: 'pressroom_browser_restarts_total',
    help: 'Chromium launches after the first one (crash replacements and recycling)',
    registers,
    collect: syncBrowserCounters,
  });
  const crashes = new Counter({
    name: 'pressroom_browser_crashes_total',
    help: 'Chromium processes that disconnected unexpectedly',
    registers,
    collect: syncBrowserCounters,
  });
  const pageCrashRetries = new Counter({
    name: 'pressroom_render_page_crash_retries_total',
    help: 'Renders tried once more on fresh pages because a page renderer had crashed',
    registers,
    collect: syncBrowserCounters,
  });
  /** Adds to `counter` what the renderer's own count `key` grew by since the last look. */
  function follow(counter: Counter, key: keyof typeof seen, now: number): void {
    if (now > seen[key]) counter.inc(now - seen[key]);
    seen[key] = now;
  }
  function syncBrowserCounters(): void {
    if (!sources) return;
    const stats = sources.rendererStats();
    follow(crashes, 'crashes', stats.crashes);
    follow(pageCrashRetries, 'pageCrashRetries', stats.pageCrashRetries ?? 0);
    // Every launch after the first is a restart (crash replacement or recycling).
    const more = Math.max(0, stats.launches - 1) - Math.max(0, seen.launches - 1);
    if (more > 0) restarts.inc(more);
    follow(launches, 'launches', stats.launches);
  }
  new Gauge({
    name: 'pressroom_render_slots',
    help: 'Renders in progress (state="active") and waiting for a page slot (state="waiting")',
    labelNames: ['state'] as const,
    registers,
    collect() {
      if (!sources) return;
      const stats = sources.rendererStats();
      this.set({ state: 'active' }, stats.active);
      this.set({ state: 'waiting' }, stats.queued);
    },
  });
  const watchedPools = new Set<() => readonly PoolSnapshot[]>();
  const allPools = (): readonly PoolSnapshot[] => [
    ...(sources?.pools?.() ?? []),
    ...[...watchedPools].flatMap((pools) => pools()),
  ];
  for (const [name, help, key] of [
    [
      'pressroom_pool_capacity',
      'Slots of each pool of heavy work (pool: render, compaction, qpdf, ghostscript, xmllint, json_parse, templates…)',
      'capacity',
    ],
    [
      'pressroom_pool_active',
      'Tasks holding a slot of each pool of heavy work, shared fairly between accounts (scheduling/fair-scheduler.ts)',
      'active',
    ],
    ['pressroom_pool_waiting', 'Tasks waiting for a slot of each pool of heavy work', 'waiting'],
  ] as const) {
    new Gauge({
      name,
      help,
      labelNames: ['pool'] as const,
      registers,
      collect() {
        for (const pool of allPools()) this.set({ pool: pool.pool }, pool[key]);
      },
    });
  }
  // A pool's own count, exported as a counter by adding what it grew by since the last scrape.
  const startedSeen = new Map<string, number>();
  new Counter({
    name: 'pressroom_pool_started_total',
    help: 'Tasks granted a slot of each pool of heavy work',
    labelNames: ['pool'] as const,
    registers,
    collect() {
      for (const { pool, started } of allPools()) {
        const seenBefore = startedSeen.get(pool) ?? 0;
        if (started > seenBefore) this.inc({ pool }, started - seenBefore);
        else if (started === 0) this.inc({ pool }, 0);
        startedSeen.set(pool, Math.max(seenBefore, started));
      }
    },
  });
  new Gauge({
    name: 'pressroom_render_queue_depth_by_account',
    help: `Renders waiting for a page slot, per account; only accounts with something waiting, at most the ${ACCOUNT_SERIES_LIMIT} with the most`,
    labelNames: ['account_id'] as const,
    registers,
    collect() {
      // Reset first: an account whose line emptied must disappear, not keep its last value.
      this.reset();
      const waiting = sources?.rendererStats().queuedByAccount;
      if (!waiting) return;
      const largest = [...waiting].sort((a, b) => b[1] - a[1]).slice(0, ACCOUNT_SERIES_LIMIT);
      for (const [accountId, depth] of largest) this.set({ account_id: accountId }, depth);
    },
  });
  new Gauge({
    name: 'pressroom_render_accounts_over_failure_budget',
    help: 'Accounts whose failed and timed-out renders went over their failure budget in the window (their renders wait behind others)',
    registers,
    collect() {
      if (sources) this.set(sources.rendererStats().accountsOverFailureBudget ?? 0);
    },
  });
  new Gauge({
    name: 'pressroom_browser_ready',
    help: '1 when a browser is up and taking renders',
    registers,
    collect() {
      if (sources) this.set(sources.rendererStats().ready ? 1 : 0);
    },
  });

  return {
    registry,
    httpRequest({ method, route, status, seconds }) {
      httpRequests.inc({ method, route, status: String(status) });
      httpDuration.observe({ method, route }, seconds);
    },
    render({ kind, outcome, seconds }) {
      renders.inc({ kind, outcome });
      if (outcome === 'ok') renderDuration.observe({ kind }, seconds);
    },
    documentBoundHit: (bound) => documentBoundsHit.inc({ bound }),
    compaction({ outcome, bytesBefore, bytesAfter, seconds, spooled }) {
      compactions.inc({ outcome });
      if (spooled) spooledPdfs.inc();
      compactionBytes.inc({ stage: 'before' }, bytesBefore);
      compactionBytes.inc({ stage: 'after' }, bytesAfter);
      compactionSaved.inc(bytesBefore - bytesAfter);
      compactionDuration.observe(seconds);
    },
    credits(type, credits) {
      if (type === 'PDFGEN') creditsConsumed.inc(credits);
      else if (type === 'REFUND') creditsRefunded.inc(credits);
      else creditsGranted.inc({ type }, credits);
    },
    jobAttempt: (outcome) => jobAttempts.inc({ outcome }),
    webhookAttempt: (outcome) => webhookAttempts.inc({ outcome }),
    remoteResource: (outcome) => remoteResources.inc({ outcome }),
    offloadedJsonParse: (outcome, seconds) => offloadedJsonParses.observe({ outcome }, seconds),
    watchJsonParsePool(stats) {
      jsonParsePool = stats;
    },
    watchPools(pools) {
      watchedPools.add(pools);
      return () => watchedPools.delete(pools);
    },
    collectFrom(given) {
      sources = given;
      const redisReady = given.redisReady;
      if (!redisReady) return;
      new Gauge({
        name: 'pressroom_redis_up',
        help: '1 when the shared rate-limit store answers; 0 means each process limits on its own (docs/rate-limits.md)',
        registers,
        collect() {
          this.set(redisReady() ? 1 : 0);
        },
      });
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
