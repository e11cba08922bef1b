/**
 * The async part of the benchmark (issue 4): the service in-process on SQLite, then on PostgreSQL, with
 * the invoice fixture (`../shared/peers/fixtures/invoice.{html,json}`), over real HTTP on loopback.
 *
 * For each database:
 * 1. sync: N × `POST /v1/pdf/create` at concurrency C → documents/s;
 * 2. async: N × `POST /v1/pdf/create-async` at concurrency C, until every job is completed → jobs/s
 *    (first submit → last completion) and queue latency p50/p95: accepted → processing (`started_at −
 *    created_at`) and accepted → completed;
 * 3. idle: M jobs one at a time (each waits for the previous one): accepted → processing when workers
 *    are idle (the goal: p50 under 50 ms).
 *
 * `node --import tsx bench/async-bench.ts [--n 40] [--concurrency 2] [--idle 20] [--dialects sqlite,postgres]`
 * PostgreSQL: `PRESSROOM_BENCH_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test); a
 * schema of its own is created and dropped.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../src/config/load-config.js';
import { buildApp } from '../src/http/app.js';
import { createServices } from '../src/services.js';
import { createLogger } from '../src/shared/log.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = resolve(ROOT, '..', 'shared', 'peers', 'fixtures');
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const PG_URL = process.env.PRESSROOM_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '40' },
    concurrency: { type: 'string', default: '2' },
    idle: { type: 'string', default: '20' },
    dialects: { type: 'string', default: 'sqlite,postgres' },
  },
});
const N = Number(args.n);
const CONCURRENCY = Number(args.concurrency);
const IDLE = Number(args.idle);

type Api = (method: string, path: string, body?: unknown, auth?: { apiKey?: string; token?: string }) => Promise<any>;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Runs `task(i)` for i < n with at most `concurrency` at once. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

async function withService<T>(
  dialect: 'sqlite' | 'postgres',
  run: (api: Api, services: Awaited<ReturnType<typeof createServices>>) => Promise<T>,
): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-async-bench-'));
  const schema = `bench_${Date.now()}`;
  if (dialect === 'postgres') await withPg((c) => c.query(`create schema "${schema}"`));
  const config = loadConfig({
    PRESSROOM_DATA_DIR: dataDir,
    PRESSROOM_ADMIN_TOKEN: ADMIN_TOKEN,
    PRESSROOM_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
    PRESSROOM_LOG_LEVEL: 'warn',
    PRESSROOM_HOST: '127.0.0.1',
    PORT: '0',
    ...(dialect === 'postgres' ? { PRESSROOM_DATABASE_URL: PG_URL } : {}),
  });
  const services = await createServices(config, {
    logger: createLogger(config.logLevel),
    pgSchema: dialect === 'postgres' ? schema : undefined,
  });
  const app = await buildApp(services);
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const api: Api = async (method, path, body, auth = {}) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (auth.apiKey) headers['x-api-key'] = auth.apiKey;
      if (auth.token) headers.authorization = `Bearer ${auth.token}`;
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    await services.renderer.warmUp();
    services.startWorkers();
    return await run(api, services);
  } finally {
    await app.close();
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (dialect === 'postgres') await withPg((c) => c.query(`drop schema if exists "${schema}" cascade`));
  }
}

async function withPg<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function benchDialect(dialect: 'sqlite' | 'postgres'): Promise<Record<string, number | string>> {
  return withService(dialect, async (api, services) => {
    const account = await api(
      'POST',
      '/v1/admin/accounts',
      { credits: 2 * N + IDLE + 10, plan: 'enterprise' },
      { token: ADMIN_TOKEN },
    );
    const apiKey = account.api_key as string;
    const html = readFileSync(join(FIXTURES, 'invoice.html'), 'utf8');
    const data = JSON.parse(readFileSync(join(FIXTURES, 'invoice.json'), 'utf8'));
    const template = await api('POST', '/v1/templates', { name: 'Invoice', html }, { apiKey });
    const body = { template_id: template.id, data };
    await api('POST', '/v1/pdf/create', body, { apiKey }); // first render after warm-up, not measured

    const syncStarted = performance.now();
    await pool(N, CONCURRENCY, async () => void (await api('POST', '/v1/pdf/create', body, { apiKey })));
    const syncSeconds = (performance.now() - syncStarted) / 1000;

    const db = services.database.db;
    const allDone = async (ids: string[]) => {
      for (;;) {
        const rows = await db
          .selectFrom('jobs')
          .select(['status', 'created_at', 'started_at', 'completed_at'])
          .where('id', 'in', ids)
          .execute();
        if (rows.every((r) => r.status === 'completed' || r.status === 'failed')) return rows;
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const ids: string[] = [];
    const asyncStarted = Date.now();
    await pool(
      N,
      CONCURRENCY,
      async () => void ids.push((await api('POST', '/v1/pdf/create-async', body, { apiKey })).job_id),
    );
    const rows = await allDone(ids);
    const lastCompleted = Math.max(...rows.map((r) => Number(r.completed_at)));
    const asyncSeconds = (lastCompleted - asyncStarted) / 1000;
    const failed = rows.filter((r) => r.status !== 'completed').length;

    const idle: number[] = [];
    for (let i = 0; i < IDLE; i++) {
      const { job_id } = await api('POST', '/v1/pdf/create-async', body, { apiKey });
      const [row] = await allDone([job_id]);
      idle.push(Number(row!.started_at) - Number(row!.created_at));
    }

    const toProcessing = rows.map((r) => Number(r.started_at) - Number(r.created_at));
    const toCompleted = rows.map((r) => Number(r.completed_at) - Number(r.created_at));
    return {
      dialect,
      'sync docs/s': +(N / syncSeconds).toFixed(2),
      'async jobs/s': +(N / asyncSeconds).toFixed(2),
      'async/sync': +(N / asyncSeconds / (N / syncSeconds)).toFixed(3),
      'accepted→processing p50 ms': percentile(toProcessing, 50),
      'accepted→processing p95 ms': percentile(toProcessing, 95),
      'accepted→completed p50 ms': percentile(toCompleted, 50),
      'accepted→completed p95 ms': percentile(toCompleted, 95),
      'idle accepted→processing p50 ms': percentile(idle, 50),
      'idle accepted→processing p95 ms': percentile(idle, 95),
      'failed jobs': failed,
    };
  });
}

const results: Record<string, number | string>[] = [];
for (const dialect of args.dialects!.split(',') as ('sqlite' | 'postgres')[]) {
  process.stderr.write(`[async-bench] ${dialect}: n=${N} concurrency=${CONCURRENCY} idle=${IDLE}\n`);
  results.push(await benchDialect(dialect));
}
console.log(`\nAsync vs sync, invoice fixture, n=${N}, concurrency=${CONCURRENCY} (render concurrency = cores)`);
console.table(results);
