/**
 * What does the PREVIEW stamp cost? Prints a 1-page invoice and a 30-page document with Pressroom's
 * renderer (no stamp), then times N stampings of each, per route:
 *   pdf-lib — stampPreview (src/finishing/preview-stamp.ts): parse, draw on every page, write, in process
 *   qpdf    — `qpdf in.pdf --overlay stamp.pdf --repeat=1 -- out.pdf`, a one-page stamp PDF laid over
 *             every page (the alternative weighed; temp files included in its cost)
 * and prints wall p50/p95 ms, CPU ms (own + qpdf's), the longest event-loop stall, output size and
 * how many pages pdftotext finds PREVIEW on.
 *
 *   node --import tsx bench/costs/preview-stamp-bench.ts [--n 10] [--report] [--fixtures /work/shared/peers/fixtures]
 *
 * --report adds the peers' 33-page tagged report (~32,000 objects, 5.5 MB): the heavy end.
 * Stampings run one at a time; the load average is printed because other work skews wall times.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { PDFDocument, PageSizes } from '@cantoo/pdf-lib';
import { createPdfRenderer } from '../../src/rendering/pdf-renderer.js';
import { testDependencies, testOptions } from '../../test/support/documents/rendering-kit.js';
import { stampPreview } from '../../src/finishing/preview-stamp.js';
import { createLogger } from '../../src/shared/log.js';

const args = process.argv.slice(2);
const FIXTURES = args.includes('--fixtures')
  ? String(args[args.indexOf('--fixtures') + 1])
  : '/work/shared/peers/fixtures';
const N = args.includes('--n') ? Number(args[args.indexOf('--n') + 1]) || 10 : 10;
const WARMUP = 2;
const run = promisify(execFile);

const THIRTY_PAGES = {
  html:
    '{% for i in range(0, 30) %}<section><h1>Section {{ i + 1 }}</h1><p>{{ text }}</p><table>' +
    '{% for j in range(0, 20) %}<tr><td>{{ i + 1 }}.{{ j + 1 }}</td><td>Line {{ j + 1 }}</td><td>{{ (i * j) / 7 }}</td></tr>{% endfor %}' +
    '</table></section>{% endfor %}',
  css: 'section { break-after: page } section:last-child { break-after: auto } td { border: 1px solid #ccc; padding: 2px 6px }',
  data: { text: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(25) },
};

/** The unstamped PDFs, printed the way the service prints a preview. */
async function printInputs(): Promise<Map<string, Buffer>> {
  const options = testOptions({
    concurrency: 1,
    queueLimit: 10,
    timeoutMs: 300_000,
    templateTimeoutMs: 60_000,
    templateOutputLimitBytes: 64 << 20,
    recycleAfterRenders: 1_000_000,
  });
  const renderer = createPdfRenderer(options, createLogger('warn'), testDependencies(options));
  const fixture = (name: string) => ({
    html: readFileSync(join(FIXTURES, `${name}.html`), 'utf8'),
    data: JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as object,
  });
  const sources: [string, { html: string; css?: string; data: object }][] = [
    ['invoice, 1 page', fixture('invoice')],
    ['generated, 30 pages', THIRTY_PAGES],
  ];
  if (args.includes('--report')) sources.push(['report, 33 pages', fixture('report')]);
  const out = new Map<string, Buffer>();
  try {
    for (const [name, source] of sources) {
      out.set(
        name,
        (await renderer.render({ template: { html: source.html, css: source.css ?? null }, data: source.data })).pdf,
      );
    }
  } finally {
    await renderer.close();
  }
  return out;
}

/** CPU ms used so far by this process plus its reaped children (qpdf), from process.cpuUsage and /proc/self/stat. */
function cpuMs(): number {
  const own = process.cpuUsage();
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (own.user + own.system) / 1000 + (Number(fields[13]) + Number(fields[14])) * 10;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function stampWithQpdf(pdf: Buffer, stampFile: string, dir: string): Promise<Buffer> {
  const input = join(dir, 'in.pdf');
  const output = join(dir, 'out.pdf');
  await writeFile(input, pdf);
  await run('qpdf', [input, '--overlay', stampFile, '--repeat=1', '--', output]);
  return readFile(output);
}

/** Pages on which pdftotext finds PREVIEW, and the page count. */
async function stampedPages(pdf: Buffer, dir: string): Promise<string> {
  const file = join(dir, 'check.pdf');
  writeFileSync(file, pdf);
  const pages = Number(/^Pages:\s+(\d+)/m.exec((await run('pdfinfo', [file])).stdout)?.[1]);
  let found = 0;
  for (let page = 1; page <= pages; page++) {
    const text = (await run('pdftotext', ['-f', String(page), '-l', String(page), file, '-'])).stdout;
    if (text.includes('PREVIEW')) found += 1;
  }
  return `${found}/${pages}`;
}

async function main(): Promise<void> {
  const inputs = await printInputs();
  const dir = mkdtempSync(join(tmpdir(), 'preview-stamp-bench-'));
  const stampFile = join(dir, 'stamp.pdf');
  const blank = await PDFDocument.create();
  blank.addPage(PageSizes.A4);
  writeFileSync(stampFile, await stampPreview(await blank.save()));
  const routes: Record<string, (pdf: Buffer) => Promise<Buffer>> = {
    'pdf-lib': (pdf) => stampPreview(pdf),
    qpdf: (pdf) => stampWithQpdf(pdf, stampFile, dir),
  };
  const rows: string[] = [];
  try {
    for (const [name, input] of inputs) {
      for (const [route, stamp] of Object.entries(routes)) {
        const latencies: number[] = [];
        const cpu: number[] = [];
        const loop = monitorEventLoopDelay({ resolution: 5 });
        let last: Buffer = Buffer.alloc(0);
        for (let i = 0; i < N + WARMUP; i++) {
          if (i === WARMUP) loop.enable();
          const started = performance.now();
          const cpuStarted = cpuMs();
          last = await stamp(input);
          if (i >= WARMUP) {
            latencies.push(performance.now() - started);
            cpu.push(cpuMs() - cpuStarted);
          }
        }
        loop.disable();
        latencies.sort((a, b) => a - b);
        cpu.sort((a, b) => a - b);
        rows.push(
          `| ${name} | ${route} | ${N} | ${percentile(latencies, 50).toFixed(0)} | ${percentile(latencies, 95).toFixed(0)} ` +
            `| ${percentile(cpu, 50).toFixed(0)} | ${(loop.max / 1e6).toFixed(0)} | ${(input.length / 1024).toFixed(0)} | ${(last.length / 1024).toFixed(0)} ` +
            `| ${await stampedPages(last, dir)} |`,
        );
        console.error(rows[rows.length - 1]);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const qpdf = (await run('qpdf', ['--version'])).stdout.split('\n')[0];
  console.log(
    `\nPREVIEW stamp, ${N} runs per row after ${WARMUP} warm-up; ${qpdf}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  console.log(
    '| input | route | n | p50 ms | p95 ms | CPU ms p50 | max loop stall ms | in KB | out KB | pages with PREVIEW |',
  );
  console.log('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const row of rows) console.log(row);
}

await main();
