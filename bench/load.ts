/**
 * `npm run load`: mixed sync and async traffic against two deployments, in one run (issue 7):
 *
 *   cluster   2 × `serve --role api` + 2 × `serve --role worker` on PostgreSQL (a schema of its own),
 *             Redis (rate limits) and the loopback S3 server (the CDN storage, signatures verified)
 *   embedded  1 × `serve` (role all) on SQLite and local files, the default installation
 *
 * Each gets the same closed-loop load for `--duration` seconds: `--connections` virtual users, each
 * sending its next request as soon as the previous one is answered, round-robin over the API
 * processes; of every 10 requests 7 are `POST /v1/pdf/create` (sync, the peers' invoice fixture) and 3
 * `POST /v1/pdf/create-async` (`--sync-percent`). Then the job backlog is drained (at most
 * `--drain-timeout` seconds) to measure job throughput and end-to-end job latency.
 *
 * Out: a table on stdout and `bench/out/load-<time>.json`: per setup and kind, throughput, latency
 * p50/p95/p99/max, status counts and errors; jobs accepted/completed, drain time and latency; the
 * machine's load average before and after (the machine may be shared: read the numbers with it).
 *
 * Bounds: loopback only; `--duration` (default 120 s) and `--max-requests` (default 50 000) per setup;
 * every request has a 60 s deadline; the drain has its own deadline. Processes run from dist/
 * (rebuilt first if older than src/).
 *
 *   npm run load -- --duration 120 --connections 8 --setups cluster,embedded
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { httpRequest, startCluster, type Cluster, type ClusterOptions } from '../test/support/cluster.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = resolve(ROOT, '..', 'shared', 'peers', 'fixtures');

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '120' },
    connections: { type: 'string', default: '8' },
    'sync-percent': { type: 'string', default: '70' },
    'max-requests': { type: 'string', default: '50000' },
    'drain-timeout': { type: 'string', default: '300' },
    setups: { type: 'string', default: 'cluster,embedded' },
    out: { type: 'string' },
  },
});
const DURATION_S = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const SYNC_PERCENT = Number(args['sync-percent']);
const MAX_REQUESTS = Number(args['max-requests']);
const DRAIN_TIMEOUT_S = Number(args['drain-timeout']);

const SETUPS: Record<string, { label: string; options: ClusterOptions }> = {
  cluster: {
    label: '2 API + 2 worker processes, PostgreSQL, Redis, S3',
    options: { apis: 2, workers: 2, database: 'postgres', storage: 's3', redisUrl: 'redis://127.0.0.1:6379' },
  },
  embedded: {
    label: '1 process (role all), SQLite, local files',
    options: { alls: 1, database: 'sqlite', storage: 'local' },
  },
};

function log(message: string): void {
  process.stderr.write(`[load] ${message}\n`);
}

function uptimeLine(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`;
  }
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface Sample {
  kind: 'sync' | 'async';
  status: number;
  ms: number;
  error?: string;
  jobId?: string;
}

function summarize(samples: Sample[], seconds: number) {
  const ok = samples.filter((s) => s.status >= 200 && s.status < 300);
  const latencies = ok.map((s) => s.ms).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const s of samples)
    statuses[s.error ? 'network_error' : String(s.status)] =
      (statuses[s.error ? 'network_error' : String(s.status)] ?? 0) + 1;
  const round = (v: number | null) => (v === null ? null : Math.round(v));
  return {
    requests: samples.length,
    ok: ok.length,
    errors: samples.length - ok.length,
    throughput_per_s: Math.round((ok.length / seconds) * 100) / 100,
    latency_ms: {
      p50: round(percentile(latencies, 50)),
      p95: round(percentile(latencies, 95)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? null),
    },
    statuses,
  };
}

function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

async function runSetup(name: string) {
  const setup = SETUPS[name];
  if (!setup) throw new Error(`unknown setup ${name}; use ${Object.keys(SETUPS).join(', ')}`);
  log(`${name}: starting ${setup.label}`);
  const cluster: Cluster = await startCluster({ ...setup.options, logLevel: 'warn', keepLogs: false });
  try {
    const apis = [...cluster.apis, ...cluster.alls];
    const { accountId, apiKey } = await cluster.createAccount({
      credits: 1_000_000,
      plan: 'pro',
      rate_limit: { per_minute: 1_000_000, per_day: 100_000_000 },
    });
    const template = await apis[0]!.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Invoice (peer fixture)', html: fixture('invoice.html') },
    });
    if (template.status !== 201) throw new Error(`template: ${template.status} ${JSON.stringify(template.body)}`);
    const data = JSON.parse(fixture('invoice.json')) as Record<string, unknown>;
    const body = { template_id: template.body.id as string, data };

    let issued = 0;
    const send = async (samples: Sample[] | undefined): Promise<void> => {
      const n = issued++;
      const kind: Sample['kind'] = n % 100 < SYNC_PERCENT ? 'sync' : 'async';
      const api = apis[n % apis.length]!;
      const started = performance.now();
      try {
        const res = await httpRequest(
          api.baseUrl,
          'POST',
          kind === 'sync' ? '/v1/pdf/create' : '/v1/pdf/create-async',
          { apiKey, body, signal: AbortSignal.timeout(60_000) },
        );
        samples?.push({
          kind,
          status: res.status,
          ms: performance.now() - started,
          jobId: kind === 'async' && res.status === 200 ? res.body.job_id : undefined,
        });
      } catch (error) {
        samples?.push({ kind, status: 0, ms: performance.now() - started, error: String(error) });
      }
    };

    // Warm-up (not measured): every process renders a few documents; then the job queue is drained.
    log(`${name}: warm-up`);
    for (let i = 0; i < apis.length * 4; i++) await send(undefined);
    await drain(cluster, accountId, 120);
    issued = 0;

    const before = uptimeLine();
    log(`${name}: ${CONNECTIONS} connections for ${DURATION_S} s (${SYNC_PERCENT} % sync); ${before}`);
    const samples: Sample[] = [];
    const startedAt = Date.now();
    const endAt = startedAt + DURATION_S * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < endAt && issued < MAX_REQUESTS) await send(samples);
      }),
    );
    const seconds = (Date.now() - startedAt) / 1000;
    const after = uptimeLine();

    log(`${name}: draining the job queue`);
    const drainStarted = Date.now();
    const drained = await drain(cluster, accountId, DRAIN_TIMEOUT_S);
    const drainSeconds = (Date.now() - drainStarted) / 1000;
    const accepted = new Set(samples.map((s) => s.jobId).filter((id): id is string => id !== undefined));
    const jobs = (
      await cluster.db
        .selectFrom('jobs')
        .select(['id', 'status', 'created_at', 'started_at', 'completed_at'])
        .where('account_id', '=', accountId)
        .execute()
    ).filter((j) => accepted.has(j.id));
    const completed = jobs.filter((j) => j.status === 'completed');
    const endToEnd = completed.map((j) => Number(j.completed_at) - Number(j.created_at)).sort((a, b) => a - b);
    const queueWait = completed.map((j) => Number(j.started_at) - Number(j.created_at)).sort((a, b) => a - b);
    const firstAccepted = Math.min(...jobs.map((j) => Number(j.created_at)));
    const lastCompleted = Math.max(...completed.map((j) => Number(j.completed_at)));
    const metrics = await Promise.all(
      [...apis, ...cluster.workers].map(async (p) => ({
        role: p.role,
        text: (await p.request('GET', '/metrics')).body as string,
      })),
    );
    const browserRestarts = metrics.reduce(
      (sum, m) => sum + Number(/^pressroom_browser_restarts_total (\d+)/m.exec(m.text)?.[1] ?? 0),
      0,
    );

    return {
      setup: name,
      description: setup.label,
      processes: { api: cluster.apis.length, worker: cluster.workers.length, all: cluster.alls.length },
      duration_s: Math.round(seconds * 10) / 10,
      connections: CONNECTIONS,
      sync_percent: SYNC_PERCENT,
      uptime_before: before,
      uptime_after: after,
      all: summarize(samples, seconds),
      sync: summarize(
        samples.filter((s) => s.kind === 'sync'),
        seconds,
      ),
      async_accept: summarize(
        samples.filter((s) => s.kind === 'async'),
        seconds,
      ),
      jobs: {
        accepted: accepted.size,
        completed: completed.length,
        failed: jobs.filter((j) => j.status === 'failed').length,
        unfinished_after_drain: drained
          ? 0
          : jobs.length - completed.length - jobs.filter((j) => j.status === 'failed').length,
        backlog_drain_s: Math.round(drainSeconds * 10) / 10,
        completed_per_s:
          completed.length > 0
            ? Math.round((completed.length / ((lastCompleted - firstAccepted) / 1000)) * 100) / 100
            : 0,
        end_to_end_ms: { p50: percentile(endToEnd, 50), p95: percentile(endToEnd, 95), p99: percentile(endToEnd, 99) },
        queue_wait_ms: { p50: percentile(queueWait, 50), p95: percentile(queueWait, 95) },
      },
      browser_restarts: browserRestarts,
      first_errors: samples
        .filter((s) => s.error || s.status >= 400)
        .slice(0, 5)
        .map((s) => ({ kind: s.kind, status: s.status, error: s.error })),
    };
  } finally {
    await cluster.close();
  }
}

/** Waits until the account has no pending or processing job; false when `timeoutS` passed first. */
async function drain(cluster: Cluster, accountId: string, timeoutS: number): Promise<boolean> {
  const end = Date.now() + timeoutS * 1000;
  while (Date.now() < end) {
    const open = await cluster.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where('status', 'in', ['pending', 'processing'])
      .executeTakeFirstOrThrow();
    if (Number(open.n) === 0) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

type Result = Awaited<ReturnType<typeof runSetup>>;

function printTable(results: Result[]): void {
  const rows: string[][] = [['setup', 'kind', 'ok/s', 'p50 ms', 'p95 ms', 'p99 ms', 'requests', 'errors']];
  for (const r of results) {
    for (const [kind, s] of [
      ['sync', r.sync],
      ['async accept', r.async_accept],
      ['all', r.all],
    ] as const) {
      rows.push([
        r.setup,
        kind,
        String(s.throughput_per_s),
        String(s.latency_ms.p50),
        String(s.latency_ms.p95),
        String(s.latency_ms.p99),
        String(s.requests),
        String(s.errors),
      ]);
    }
    rows.push([
      r.setup,
      'jobs done',
      String(r.jobs.completed_per_s),
      String(r.jobs.end_to_end_ms.p50),
      String(r.jobs.end_to_end_ms.p95),
      String(r.jobs.end_to_end_ms.p99),
      String(r.jobs.accepted),
      String(r.jobs.failed + r.jobs.unfinished_after_drain),
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(
    `${line(rows[0]!)}\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|\n${rows.slice(1).map(line).join('\n')}\n`,
  );
  for (const r of results)
    process.stdout.write(
      `${r.setup}: ${r.description}; ${r.duration_s} s; backlog drained in ${r.jobs.backlog_drain_s} s; browser restarts ${r.browser_restarts}\n  before: ${r.uptime_before}\n  after:  ${r.uptime_after}\n`,
    );
}

const runStarted = new Date().toISOString();
const results: Result[] = [];
for (const name of String(args.setups)
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean))
  results.push(await runSetup(name));
const outFile = args.out ?? join(ROOT, 'bench', 'out', `load-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(
  outFile,
  `${JSON.stringify({ started: runStarted, node: process.version, args: { DURATION_S, CONNECTIONS, SYNC_PERCENT, MAX_REQUESTS }, results }, null, 2)}\n`,
);
printTable(results);
log(`written to ${outFile}`);
