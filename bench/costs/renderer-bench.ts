/**
 * Benchmarks the renderer against the peers harness's `floor` engine in one run, on the peers'
 * invoice and report fixtures:
 *
 *   node --import tsx bench/costs/renderer-bench.ts [--n 40] [--n-report 5] [--concurrency 1,2]
 *        [--rounds 2] [--fixtures invoice,report] [--memory 1000] [--peers /work/shared/peers]
 *
 * `floor` is the peers' engine rebuilt here: Nunjucks in Node (autoescape, compiled once) +
 * `page.setContent(html, {waitUntil: 'load'})` + `page.pdf({printBackground, preferCSSPageSize,
 * tagged: true})` on one pre-opened page per worker of its own browser, with the peers' flags.
 * `pressroom` is `createPdfRenderer().render()` end to end (templating in the sandbox included).
 * Batches alternate between the engines (`--rounds`) so drift on a shared machine hits both alike.
 * `--memory N` then renders N invoices and prints Node and Chromium RSS before and after.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import nunjucks from 'nunjucks';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { createLogger } from '../../src/shared/log.js';
import { createPdfRenderer, type PdfRenderer } from '../../src/rendering/pdf-renderer.js';
import { testDependencies, testOptions } from '../../test/support/documents/rendering-kit.js';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '40' },
    'n-report': { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1,2' },
    rounds: { type: 'string', default: '2' },
    fixtures: { type: 'string', default: 'invoice,report' },
    memory: { type: 'string', default: '0' },
    peers: { type: 'string', default: '/work/shared/peers' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});

// The peers' lib/chromium-args.cjs, verbatim.
const PEER_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--disable-extensions',
  '--disable-default-apps',
  '--mute-audio',
  '--hide-scrollbars',
];

interface Fixture {
  name: string;
  source: string;
  data: unknown;
  expectPages: number;
}
interface Engine {
  name: string;
  pid(): number | undefined;
  render(fx: Fixture, worker: number): Promise<Buffer>;
  close(): Promise<void>;
}
interface Batch {
  engine: string;
  fixture: string;
  c: number;
  latencies: number[];
  wallMs: number;
  cpuMs: number;
}

const concurrencies = args.concurrency.split(',').map(Number);
const maxC = Math.max(...concurrencies);
const fixtures: Fixture[] = args.fixtures.split(',').map((name) => ({
  name,
  source: readFileSync(join(args.peers, 'fixtures', `${name}.html`), 'utf8'),
  data: JSON.parse(readFileSync(join(args.peers, 'fixtures', `${name}.json`), 'utf8')),
  expectPages: name === 'invoice' ? 1 : 33,
}));

/** CPU ms used so far by a process and its descendants (from /proc). */
function treeCpuMs(root: number | undefined): number {
  return treeSum(root, (stat) => (Number(stat[11]) + Number(stat[12])) * 10);
}

/** RSS in MiB of a process and its descendants (overstates shared pages, like the peers' column). */
function treeRssMb(root: number | undefined): number {
  return treeSum(root, (stat) => (Number(stat[21]) * 4096) / 1024 / 1024);
}

function treeSum(root: number | undefined, pick: (fields: string[]) => number): number {
  if (root === undefined) return 0;
  const procs = new Map<string, { ppid: string; value: number }>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(pid, { ppid: fields[1]!, value: pick(fields) });
    } catch {
      // exited
    }
  }
  let sum = 0;
  for (const [pid, proc] of procs) {
    for (let p: string | undefined = pid; p && p !== '0'; p = procs.get(p)?.ppid) {
      if (p === String(root)) {
        sum += proc.value;
        break;
      }
    }
  }
  return sum;
}

async function createFloor(): Promise<Engine> {
  const profile = mkdtempSync(join(tmpdir(), 'bench-floor-'));
  const browser: Browser = await puppeteer.launch({
    executablePath: args.chromium,
    args: PEER_ARGS,
    userDataDir: profile,
    headless: true,
    protocolTimeout: 180_000,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  const pages: Page[] = [];
  for (let i = 0; i < maxC; i++) pages.push(await browser.newPage());
  const env = new nunjucks.Environment([], { autoescape: true, throwOnUndefined: false });
  const compiled = new Map<string, nunjucks.Template>();
  return {
    name: 'floor',
    pid: () => browser.process()?.pid,
    async render(fx, worker) {
      let template = compiled.get(fx.name);
      if (!template) compiled.set(fx.name, (template = new nunjucks.Template(fx.source, env, fx.name, true)));
      const page = pages[worker]!;
      await page.setContent(template.render(fx.data as object), { waitUntil: 'load', timeout: 180_000 });
      return Buffer.from(
        await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged: true, timeout: 180_000 }),
      );
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

async function createPressroom(): Promise<Engine & { renderer: PdfRenderer }> {
  const options = testOptions({
    chromiumPath: args.chromium,
    concurrency: maxC,
    queueLimit: 100,
    timeoutMs: 180_000,
    templateTimeoutMs: 30_000,
    templateOutputLimitBytes: 20 * 1024 * 1024,
    recycleAfterRenders: 1_000_000,
  });
  const renderer = createPdfRenderer(options, createLogger('warn'), testDependencies(options));
  await renderer.warmUp();
  return {
    name: 'pressroom',
    renderer,
    pid: () => renderer.stats().browserPid,
    render: async (fx) => (await renderer.render({ template: { html: fx.source }, data: fx.data })).pdf,
    close: () => renderer.close(),
  };
}

async function runBatch(engine: Engine, fx: Fixture, c: number, n: number): Promise<Batch> {
  for (let w = 0; w < c; w++) await engine.render(fx, w); // warm-up: one document per worker
  const first = await engine.render(fx, 0);
  checkPdf(engine.name, fx, first);
  let next = 0;
  const latencies: number[] = [];
  const cpu0 = treeCpuMs(engine.pid()) + processCpuMs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async (_, worker) => {
      while (next < n) {
        next += 1;
        const t = performance.now();
        await engine.render(fx, worker);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpuMs = treeCpuMs(engine.pid()) + processCpuMs() - cpu0;
  return { engine: engine.name, fixture: fx.name, c, latencies, wallMs, cpuMs };
}

function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function checkPdf(engine: string, fx: Fixture, pdf: Buffer): void {
  if (pdf.subarray(0, 5).toString() !== '%PDF-') throw new Error(`${engine}/${fx.name}: not a PDF`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-pdf-'));
  try {
    const file = join(dir, 'out.pdf');
    execFileSync('sh', ['-c', `cat > ${file}`], { input: pdf });
    const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [file], { encoding: 'utf8' }))?.[1]);
    if (pages !== fx.expectPages) throw new Error(`${engine}/${fx.name}: ${pages} pages, expected ${fx.expectPages}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function summarize(batches: Batch[]): void {
  const rows = new Map<string, Batch[]>();
  for (const b of batches) {
    const key = `${b.fixture}|${b.c}|${b.engine}`;
    rows.set(key, [...(rows.get(key) ?? []), b]);
  }
  const stat = (list: Batch[]) => {
    const lat = list.flatMap((b) => b.latencies).sort((a, b) => a - b);
    const docs = lat.length;
    const wall = list.reduce((s, b) => s + b.wallMs, 0);
    return {
      docs,
      docsPerS: (docs / wall) * 1000,
      p50: percentile(lat, 50),
      p95: percentile(lat, 95),
      cpu: list.reduce((s, b) => s + b.cpuMs, 0) / docs,
    };
  };
  console.log(
    '\n| fixture | c | engine | docs | docs/s | p50 ms | p95 ms | cpu ms/doc | docs/s vs floor | p50 − floor p50 |',
  );
  console.log('|---|---|---|--:|--:|--:|--:|--:|--:|--:|');
  for (const fx of fixtures)
    for (const c of concurrencies) {
      const floor = stat(rows.get(`${fx.name}|${c}|floor`) ?? []);
      for (const engine of ['floor', 'pressroom']) {
        const s = stat(rows.get(`${fx.name}|${c}|${engine}`) ?? []);
        const ratio = engine === 'floor' ? '' : `${((s.docsPerS / floor.docsPerS) * 100).toFixed(0)} %`;
        const delta =
          engine === 'floor' ? '' : `${(s.p50 - floor.p50).toFixed(1)} ms (×${(s.p50 / floor.p50).toFixed(2)})`;
        console.log(
          `| ${fx.name} | ${c} | ${engine} | ${s.docs} | ${s.docsPerS.toFixed(2)} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.cpu.toFixed(0)} | ${ratio} | ${delta} |`,
        );
      }
    }
}

async function memoryRun(engine: Engine & { renderer: PdfRenderer }, count: number): Promise<void> {
  const invoice = fixtures.find((f) => f.name === 'invoice') ?? fixtures[0]!;
  const snapshot = () => ({
    nodeRssMb: process.memoryUsage().rss / 1024 / 1024,
    chromiumRssMb: treeRssMb(engine.pid()),
  });
  const before = snapshot();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: maxC }, async (_, worker) => {
      while (next < count) {
        next += 1;
        await engine.render(invoice, worker);
      }
    }),
  );
  const after = snapshot();
  console.log(
    `\nmemory: ${count} × ${invoice.name} at c=${maxC} in ${((performance.now() - t0) / 1000).toFixed(1)} s` +
      ` — Node RSS ${before.nodeRssMb.toFixed(0)} → ${after.nodeRssMb.toFixed(0)} MiB,` +
      ` Chromium tree RSS ${before.chromiumRssMb.toFixed(0)} → ${after.chromiumRssMb.toFixed(0)} MiB (pid ${engine.pid()})`,
  );
  console.log(JSON.stringify(engine.renderer.stats()));
}

async function main(): Promise<void> {
  const floor = await createFloor();
  const pressroom = await createPressroom();
  const batches: Batch[] = [];
  try {
    for (const fx of fixtures)
      for (const c of concurrencies)
        for (let round = 0; round < Number(args.rounds); round++) {
          const n = fx.name === 'invoice' ? Number(args.n) : Number(args['n-report']);
          // Alternate which engine goes first, so neither always inherits the other's leftovers.
          const order = round % 2 === 0 ? [floor, pressroom] : [pressroom, floor];
          for (const engine of order) {
            const batch = await runBatch(engine, fx, c, n);
            batches.push(batch);
            process.stderr.write(
              `${engine.name} ${fx.name} c=${c} round ${round + 1}: ${((n / batch.wallMs) * 1000).toFixed(2)} docs/s\n`,
            );
          }
        }
    summarize(batches);
    if (Number(args.memory) > 0) await memoryRun(pressroom, Number(args.memory));
  } finally {
    await Promise.allSettled([floor.close(), pressroom.close()]);
  }
}

await main();
