/**
 * `npm run bench -- --suite batch` (issue 40): N invoices (default 10,000) from an N-row CSV through one
 * batch on the embedded default (SQLite, local files), side by side with the warm-Chromium floor's
 * invoice throughput measured in the same run:
 * 1. the floor: `bench.mjs --engines floor --fixtures invoice --concurrency C --n M` (M = min(N, 1000));
 * 2. the built service (dist/), its Node process's RSS sampled from /proc every 100 ms from start to end;
 *    the CSV uploaded as a multipart `rows` file, `output: zip`; the clock runs from the upload to the
 *    batch's end (the zip built and stored) → docs/s, peak RSS, the zip's size;
 * 3. with `--compare-cli`: the same CSV through `pressroom generate --zip` (the built CLI, a child
 *    process), from its start to its exit → docs/s;
 * 4. with `--compare-async`: the same N invoices as N `create-async` calls at concurrency C, until every
 *    job has completed → docs/s.
 * The invoice rows are the peer fixture's data with the invoice number changed per row; nested objects
 * become dotted columns and arrays JSON cells, as a spreadsheet export would carry them.
 * Options: --n 10000 --concurrency 2 --compare-cli --compare-async (each off by default: each doubles the run).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import { PEERS } from './peer-chromium.js';
import { createBenchAccount, log, preparePeers, ROOT, SHARED_PEERS, startBenchService } from './bench-service.js';
import { resultFile } from './rounds.js';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '2' },
    'compare-cli': { type: 'boolean', default: false },
    'compare-async': { type: 'boolean', default: false },
    suite: { type: 'string' },
  },
});
const N = Number(args.n);
const CONCURRENCY = Number(args.concurrency);

/** One CSV cell, quoted when it must be. */
const cell = (value: unknown): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

/** Top-level scalars and nested objects as dotted columns; arrays as JSON cells. */
function flatten(
  value: Record<string, unknown>,
  prefix = '',
  out: Record<string, unknown> = {},
): Record<string, unknown> {
  for (const [key, v] of Object.entries(value)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v))
      flatten(v as Record<string, unknown>, `${prefix}${key}.`, out);
    else out[`${prefix}${key}`] = v;
  }
  return out;
}

function invoiceCsv(n: number): string {
  const data = flatten(
    JSON.parse(readFileSync(join(SHARED_PEERS, 'fixtures', 'invoice.json'), 'utf8')) as Record<string, unknown>,
  );
  const columns = Object.keys(data);
  const numberColumn = columns.find((c) => /number/i.test(c));
  const lines = [columns.join(',')];
  for (let i = 0; i < n; i++)
    lines.push(
      columns.map((c) => cell(c === numberColumn ? `INV-${String(i + 1).padStart(6, '0')}` : data[c])).join(','),
    );
  return `${lines.join('\n')}\n`;
}

function floorDocsPerSec(n: number): Promise<number> {
  const label = `batch-floor-${Date.now()}`;
  const child = spawn(
    process.execPath,
    [
      'bench.mjs',
      '--engines',
      'floor',
      '--fixtures',
      'invoice',
      '--concurrency',
      String(CONCURRENCY),
      '--n',
      String(n),
      '--label',
      label,
    ],
    { cwd: PEERS, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the floor's run ended with ${code}`));
      const results = (
        JSON.parse(readFileSync(resultFile(join(PEERS, 'out'), label), 'utf8')) as { results: { docsPerSec: number }[] }
      ).results;
      resolve(results[0]!.docsPerSec);
    });
  });
}

/** Samples the process's resident set from /proc (kB → MB) until stopped; the peak. */
function sampleRss(pid: number): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      peak = Math.max(peak, kb / 1024);
    } catch {
      // the process has ended
    }
  }, 100);
  return { stop: () => (clearInterval(timer), peak) };
}

async function main(): Promise<void> {
  preparePeers();
  log(`floor: ${Math.min(N, 1000)} invoices at concurrency ${CONCURRENCY}`);
  const floor = await floorDocsPerSec(Math.min(N, 1000));
  const service = await startBenchService({
    PRESSROOM_RENDER_CONCURRENCY: String(CONCURRENCY),
    PRESSROOM_WORKER_CONCURRENCY: String(CONCURRENCY),
    PRESSROOM_BATCH_MAX_ITEMS: String(Math.max(N, 50_000)),
  });
  const rss = sampleRss(service.child.pid!);
  try {
    const { apiKey, invoiceId } = await createBenchAccount(service.baseUrl);
    const headers = { 'x-api-key': apiKey };
    // A first document warms the service's page and template caches, as the floor's warm-up does.
    await fetch(`${service.baseUrl}/v1/pdf/create`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        template_id: invoiceId,
        data: JSON.parse(readFileSync(join(SHARED_PEERS, 'fixtures', 'invoice.json'), 'utf8')),
      }),
    });
    const csv = invoiceCsv(N);
    const form = new FormData();
    form.set('template_id', invoiceId);
    form.set('output', 'zip');
    form.set('rows', new Blob([csv], { type: 'text/csv' }), 'invoices.csv');
    log(`batch: ${N} invoices, ${(csv.length / 1e6).toFixed(1)} MB of CSV, output zip`);
    const started = performance.now();
    const accepted = await fetch(`${service.baseUrl}/v1/pdf/batches`, { method: 'POST', headers, body: form });
    const body = (await accepted.json()) as { batch_id: string };
    if (accepted.status !== 202) throw new Error(`batch refused: ${accepted.status} ${JSON.stringify(body)}`);
    const acceptMs = performance.now() - started;
    let batch: { status: string; completed: number; failed: number; result: { url: string } | null };
    let shown = 0;
    for (;;) {
      batch = (await (
        await fetch(`${service.baseUrl}/v1/pdf/batches/${body.batch_id}`, { headers })
      ).json()) as typeof batch;
      if (['completed', 'completed_with_errors', 'failed', 'cancelled'].includes(batch.status)) break;
      if (batch.completed - shown >= N / 10) log(`  ${(shown = batch.completed)} / ${N}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const seconds = (performance.now() - started) / 1000;
    const zip = await fetch(batch.result!.url);
    let zipBytes = 0;
    for await (const chunk of zip.body as unknown as AsyncIterable<Uint8Array>) zipBytes += chunk.length;
    const rows: Record<string, string | number>[] = [
      {
        what: `batch of ${N} (CSV → zip)`,
        'docs/s': +(batch.completed / seconds).toFixed(2),
        '÷ floor': +(batch.completed / seconds / floor).toFixed(3),
        'accept s': +(acceptMs / 1000).toFixed(2),
        'peak RSS MB (service Node)': Math.round(rss.stop()),
        'zip MB': +(zipBytes / 1e6).toFixed(1),
        failed: batch.failed,
      },
    ];
    if (args['compare-cli']) {
      const dir = mkdtempSync(join(tmpdir(), 'batch-bench-cli-'));
      try {
        writeFileSync(join(dir, 'invoices.csv'), csv);
        const cliStarted = performance.now();
        const cli = spawn(
          process.execPath,
          [
            join(ROOT, 'bin', 'pressroom.js'),
            'generate',
            '--url',
            service.baseUrl,
            '--key',
            apiKey,
            '--template',
            invoiceId,
            '--data',
            join(dir, 'invoices.csv'),
            '--zip',
            join(dir, 'out.zip'),
          ],
          { stdio: ['ignore', 'ignore', 'inherit'] },
        );
        const code = await new Promise<number>((resolve) => cli.once('exit', (c) => resolve(c ?? 1)));
        const cliSeconds = (performance.now() - cliStarted) / 1000;
        rows.push({
          what: `pressroom generate --zip (${N} rows)`,
          'docs/s': +(N / cliSeconds).toFixed(2),
          '÷ floor': +(N / cliSeconds / floor).toFixed(3),
          'zip MB': +(statSync(join(dir, 'out.zip')).size / 1e6).toFixed(1),
          failed: code === 0 ? 0 : `exit ${code}`,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (args['compare-async']) {
      const data = JSON.parse(readFileSync(join(SHARED_PEERS, 'fixtures', 'invoice.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      const asyncStarted = performance.now();
      const ids: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < N) {
            next += 1;
            const res = await fetch(`${service.baseUrl}/v1/pdf/create-async`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ template_id: invoiceId, data }),
            });
            ids.push(((await res.json()) as { job_id: string }).job_id);
          }
        }),
      );
      for (;;) {
        const page = (await (
          await fetch(`${service.baseUrl}/v1/pdf/jobs?status=completed&limit=1`, { headers })
        ).json()) as { total: number };
        if (page.total >= N) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      const asyncSeconds = (performance.now() - asyncStarted) / 1000;
      rows.push({
        what: `${N} create-async calls`,
        'docs/s': +(N / asyncSeconds).toFixed(2),
        '÷ floor': +(N / asyncSeconds / floor).toFixed(3),
      });
    }
    console.log(`\nfloor (warm Chromium, invoice, c=${CONCURRENCY}): ${floor.toFixed(2)} docs/s`);
    console.table(rows);
  } finally {
    rss.stop();
    await service.stop();
  }
}

await main();
