/**
 * What does PDF/A cost per route? Renders the peers' invoice once with Chromium (tagged, outline, as
 * the service does), then times N conversions per variant and route:
 *   gs       — Ghostscript pdfwrite rewrite + our metadata (convertWithGhostscript)
 *   complete — pdf-lib completion of Chromium's own file (completeWithPdfLib; not for PDF/A-1)
 * and prints wall p50/p95 ms, CPU ms (own + Ghostscript's), the longest event-loop stall, output
 * size, and whether tags and text survive.
 *
 *   node --import tsx bench/costs/pdfa-bench.ts [--n 20] [--report] [--fixtures /work/shared/peers/fixtures]
 *
 * --report adds the peers' 33-page report (3 runs each, no warm-up): the case where whole-file work
 * grows. Its PDF/A-1b can outrun Ghostscript's 60 s timeout; the row then says so.
 * Conversions run one at a time; the machine's load average is printed because other work skews it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import nunjucks from 'nunjucks';
import puppeteer from 'puppeteer-core';
import { completeWithPdfLib, convertWithGhostscript, type PdfAVariant } from '../../src/finishing/pdfa.js';

const args = process.argv.slice(2);
const FIXTURES = args.includes('--fixtures')
  ? String(args[args.indexOf('--fixtures') + 1])
  : '/work/shared/peers/fixtures';
const N = args.includes('--n') ? Number(args[args.indexOf('--n') + 1]) || 20 : 20;
const WARMUP = 2;
const run = promisify(execFile);

/** Renders fixture templates with Nunjucks and prints them with Chromium the way the service does. */
async function renderFixtures(names: string[]): Promise<Map<string, Buffer>> {
  const env = new nunjucks.Environment(new nunjucks.FileSystemLoader(FIXTURES), { autoescape: true });
  const profile = mkdtempSync(join(tmpdir(), 'pdfa-bench-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium',
    userDataDir: profile,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--headless=new'],
  });
  try {
    const page = await browser.newPage();
    const out = new Map<string, Buffer>();
    for (const name of names) {
      const data = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as object;
      await page.setContent(env.render(`${name}.html`, data), { waitUntil: 'load' });
      out.set(
        name,
        Buffer.from(await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged: true, outline: true })),
      );
    }
    return out;
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/** CPU ms used so far by this process plus its reaped children (gs), from process.cpuUsage and
 * /proc/self/stat cutime+cstime (10 ms ticks): unlike wall time, hardly moved by other load. */
function cpuMs(): number {
  const own = process.cpuUsage();
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is stat field 3
  const childTicks = Number(fields[13]) + Number(fields[14]); // cutime, cstime
  return (own.user + own.system) / 1000 + childTicks * 10;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function describeOutput(pdf: Buffer, dir: string): Promise<{ tagged: string; textChars: number }> {
  const file = join(dir, 'sample.pdf');
  writeFileSync(file, pdf);
  const info = (await run('pdfinfo', [file])).stdout;
  const text = (await run('pdftotext', [file, '-'], { maxBuffer: 64 << 20 })).stdout;
  return { tagged: /^Tagged:\s+yes/m.test(info) ? 'yes' : 'no', textChars: text.replace(/\s+/g, '').length };
}

type Route = 'gs' | 'complete';
const convert: Record<Route, (pdf: Buffer, v: PdfAVariant) => Promise<Buffer>> = {
  gs: (pdf, v) => convertWithGhostscript(pdf, v),
  complete: (pdf, v) => completeWithPdfLib(pdf, v),
};

async function main(): Promise<void> {
  const names = args.includes('--report') ? ['invoice', 'report'] : ['invoice'];
  const inputs = await renderFixtures(names);
  const dir = mkdtempSync(join(tmpdir(), 'pdfa-bench-'));
  const rows: string[] = [];
  try {
    for (const [name, input] of inputs) {
      const n = name === 'invoice' ? N : 3;
      const inputInfo = await describeOutput(input, dir);
      for (const variant of ['pdf/a-1b', 'pdf/a-2b', 'pdf/a-3b'] as const) {
        for (const route of ['gs', 'complete'] as const) {
          if (route === 'complete' && variant === 'pdf/a-1b') {
            rows.push(
              `| ${name} | ${variant} | ${route} | n/a: PDF/A-1 forbids Chromium's transparency and needs CIDSet ||||||||`,
            );
            continue;
          }
          const latencies: number[] = [];
          const cpu: number[] = [];
          const loop = monitorEventLoopDelay({ resolution: 5 });
          let last: Buffer = Buffer.alloc(0);
          const warmup = name === 'invoice' ? WARMUP : 0;
          try {
            for (let i = 0; i < n + warmup; i++) {
              if (i === warmup) loop.enable();
              const started = performance.now();
              const cpuStarted = cpuMs();
              last = await convert[route](input, variant);
              if (i >= warmup) latencies.push(performance.now() - started);
              if (i >= warmup) cpu.push(cpuMs() - cpuStarted);
            }
          } catch (error) {
            rows.push(`| ${name} | ${variant} | ${route} | failed: ${(error as Error).message} ||||||||`);
            console.error(rows[rows.length - 1]);
            continue;
          } finally {
            loop.disable();
          }
          latencies.sort((a, b) => a - b);
          cpu.sort((a, b) => a - b);
          const out = await describeOutput(last, dir);
          rows.push(
            `| ${name} | ${variant} | ${route} | ${n} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 95).toFixed(1)} ` +
              `| ${percentile(cpu, 50).toFixed(0)} ` +
              `| ${(loop.max / 1e6).toFixed(0)} | ${(input.length / 1024).toFixed(0)} | ${(last.length / 1024).toFixed(0)} ` +
              `| ${inputInfo.tagged}→${out.tagged} | ${out.textChars}/${inputInfo.textChars} |`,
          );
          console.error(rows[rows.length - 1]);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const gs = (await run('gs', ['--version'])).stdout.trim();
  console.log(
    `\nPDF/A conversion, ${N} runs per invoice row after ${WARMUP} warm-up; Ghostscript ${gs}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(
    '| input | variant | route | n | p50 ms | p95 ms | CPU ms p50 | max loop stall ms | in KB | out KB | tagged in→out | text chars out/in |',
  );
  console.log('|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|');
  for (const row of rows) console.log(row);
}

await main();
