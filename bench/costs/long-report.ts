/**
 * The 330-page report (the peers' report fixture with its data ×10): p50 latency at concurrency 1 and
 * peak RSS, Pressroom through create-async (the job path, which long documents take) against the
 * floor (a warm puppeteer Chromium, setContent + page.pdf), tagged and untagged. Part of
 * `npm run bench -- --suite issue17` (run.ts); alone:
 * `node --import tsx bench/costs/long-report.ts [--n 3] [--long-templates split,fixture] [--floor off]`.
 *
 * Template versions (`--long-templates`, default both): `fixture` is the template as the peers ship
 * it, one table of 15,000 rows (~9 GB in Chromium's renderer as one piece; the service cuts it into
 * parts, docs/long-documents.md "Long tables"); `split` is the same with its ledger written by hand as
 * tables of 500 rows (test/support/documents/split-ledger.ts), the throughput the cut must reach.
 *
 * Memory: the peers' ProcMem sampler (summed RSS of every process below this one, every 100 ms). The
 * floor runs first, with no service started; then the service is started and measured alone, its
 * Chromium included. For the service, also the peak RSS of its own Node process alone (`ps`, every
 * 100 ms), and the peak of the Buffers its event loop's thread holds (/metrics, every 100 ms): where
 * a PDF below SPOOL_ABOVE_BYTES (src/storage/spool.ts) and its copies live (a longer one goes through the spool).
 * Latency of the service: from POST create-async to the PDF downloaded.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { splitLedger } from '../../test/support/documents/split-ledger.js';
import { launchPeerBrowser, PEERS, peerChromium } from '../peer-chromium.js';

/** The versions of the report template measured: as the peers ship it, or its ledger as tables of 500 rows. */
export type LongTemplate = 'fixture' | 'split';
export const SPLIT_ROWS = 500;

export function longTemplateHtml(version: LongTemplate): string {
  const html = readFileSync(join(PEERS, 'fixtures', 'report.html'), 'utf8');
  return version === 'split' ? splitLedger(html, SPLIT_ROWS) : html;
}

/** `--long-templates a,b` from the command line, default `fixture,split`. */
export function longTemplatesOption(args: string[]): LongTemplate[] {
  const at = args.indexOf('--long-templates');
  const value = at < 0 ? 'fixture,split' : (args.splice(at, 2)[1] ?? '');
  const versions = value.split(',');
  for (const v of versions)
    if (v !== 'fixture' && v !== 'split') throw new Error(`--long-templates: ${v} is neither fixture nor split`);
  return versions as LongTemplate[];
}

export interface LongRow {
  engine: string;
  template: LongTemplate;
  tagged: boolean;
  p50Ms: number;
  kb: number;
  pages: number;
  peakRssMb: number | null;
  /** The service only: peak RSS of its own Node process (Chromium not included). */
  processPeakRssMb?: number;
  /** The service only: peak of the Buffers its event loop's thread held (`nodejs_external_memory_bytes`), where an unspooled PDF and its copies live. */
  mainBuffersPeakMb?: number;
  n: number;
  /** The first failure, when a document failed (its error code and message). */
  error?: string;
}

function log(message: string): void {
  process.stderr.write(`[bench:long] ${message}\n`);
}

export function longReportData(): Record<string, unknown> {
  const data = JSON.parse(readFileSync(join(PEERS, 'fixtures', 'report.json'), 'utf8')) as { rows: unknown[] };
  return { ...data, rows: Array.from({ length: 10 }, () => data.rows).flat() };
}

function pagesOf(pdf: Buffer): number {
  const dir = mkdtempSync(join(tmpdir(), 'bench-long-'));
  try {
    writeFileSync(join(dir, 'a.pdf'), pdf);
    return Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [join(dir, 'a.pdf')], { encoding: 'utf8' }))?.[1] ?? 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length / 2) - 1]!;

async function procMem(): Promise<{ reset(): void; read(): { peakRssMB: number | null }; stop(): Promise<void> }> {
  const { ProcMem } = await import(pathToFileURL(join(PEERS, 'lib', 'procmem.mjs')).href);
  return new ProcMem({ intervalMs: 100, pssEvery: 0 });
}

/** The floor: one warm Chromium with the peers' flags, one page, setContent + page.pdf per document. */
export async function measureFloor(n: number, templates: LongTemplate[]): Promise<LongRow[]> {
  const { fixtures } = peerChromium();
  const rows: LongRow[] = [];
  const mem = await procMem();
  const { browser, close } = await launchPeerBrowser('long-floor');
  try {
    const page = await browser.newPage();
    for (const template of templates)
      for (const tagged of [true, false]) {
        const html = fixtures.renderString(longTemplateHtml(template), longReportData());
        mem.reset();
        const times: number[] = [];
        let pdf = Buffer.alloc(0);
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          await page.setContent(html, { waitUntil: 'load', timeout: 0 });
          pdf = Buffer.from(await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged, timeout: 0 }));
          times.push(performance.now() - t0);
          log(
            `floor ${template} ${tagged ? 'tagged' : 'untagged'} ${i + 1}/${n}: ${Math.round(times.at(-1)!)} ms, ${Math.round(pdf.length / 1024)} KB`,
          );
        }
        rows.push({
          engine: 'floor',
          template,
          tagged,
          p50Ms: Math.round(p50(times)),
          kb: Math.round(pdf.length / 1024),
          pages: pagesOf(pdf),
          peakRssMb: mem.read().peakRssMB,
          n,
        });
      }
  } finally {
    await close();
    await mem.stop();
  }
  return rows;
}

/** Peak RSS of one process (`ps`, every 100 ms), in MB. */
function processPeak(pid: number): { reset(): void; readMb(): number; stop(): void } {
  let peakKb = 0;
  const sample = () => {
    try {
      peakKb = Math.max(
        peakKb,
        Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) || 0,
      );
    } catch {
      // the process has ended
    }
  };
  const timer = setInterval(sample, 100);
  return {
    reset: () => {
      peakKb = 0;
      sample();
    },
    readMb: () => {
      sample();
      return Math.round(peakKb / 1024);
    },
    stop: () => clearInterval(timer),
  };
}

/** Peak of a gauge of the service's /metrics, in MB, polled every 100 ms. */
function metricPeak(baseUrl: string, name: string): { reset(): void; readMb(): number; stop(): void } {
  let peak = 0;
  const pattern = new RegExp(`^${name} ([0-9.e+]+)$`, 'm');
  const sample = async () => {
    const text = await fetch(`${baseUrl}/metrics`)
      .then((r) => r.text())
      .catch(() => '');
    peak = Math.max(peak, Number(pattern.exec(text)?.[1] ?? 0));
  };
  const timer = setInterval(() => void sample(), 100);
  return {
    reset: () => {
      peak = 0;
    },
    readMb: () => Math.round(peak / 1048576),
    stop: () => clearInterval(timer),
  };
}

/** Pressroom (process `servicePid`): create-async, poll the job, download the PDF; `n` documents one after another per setting. */
export async function measureService(
  baseUrl: string,
  apiKey: string,
  n: number,
  templates: LongTemplate[],
  servicePid: number,
): Promise<LongRow[]> {
  const data = longReportData();
  const rows: LongRow[] = [];
  const mem = await procMem();
  const own = processPeak(servicePid);
  const mainBuffers = metricPeak(baseUrl, 'nodejs_external_memory_bytes');
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${baseUrl}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    }).catch((error: Error) => {
      // undici's "fetch failed" says nothing by itself; its cause (ECONNREFUSED, a reset…) does.
      throw new Error(
        `${path}: ${error.message} (${String((error.cause as Error | undefined)?.message ?? error.cause)})`,
        { cause: error },
      );
    });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res;
  };
  try {
    for (const template of templates)
      for (const tagged of [true, false]) {
        const templateId = (
          (await (
            await call('/v1/templates', {
              method: 'POST',
              body: JSON.stringify({ name: `330-page report (${template})`, html: longTemplateHtml(template) }),
            })
          ).json()) as { id: string }
        ).id;
        mem.reset();
        own.reset();
        mainBuffers.reset();
        const times: number[] = [];
        let pdf = Buffer.alloc(0);
        let error: string | undefined;
        for (let i = 0; i < n && !error; i++) {
          const t0 = performance.now();
          const job = (await (
            await call('/v1/pdf/create-async', {
              method: 'POST',
              body: JSON.stringify({ template_id: templateId, data, tagged }),
            })
          ).json()) as { job_id: string };
          let status: { status: string; result_url?: string; error_code?: string; error_message?: string } = {
            status: 'pending',
          };
          while (status.status !== 'completed' && status.status !== 'failed') {
            await new Promise((r) => setTimeout(r, 100));
            status = (await (await call(`/v1/pdf/jobs/${job.job_id}`)).json()) as typeof status;
          }
          if (status.status !== 'completed') {
            error = `${status.error_code}: ${status.error_message}`;
            log(
              `service ${template} ${tagged ? 'tagged' : 'untagged'} ${i + 1}/${n} failed after ${Math.round(performance.now() - t0)} ms: ${error}`,
            );
            break;
          }
          pdf = Buffer.from(await (await fetch(status.result_url!)).arrayBuffer());
          times.push(performance.now() - t0);
          log(
            `service ${template} ${tagged ? 'tagged' : 'untagged'} ${i + 1}/${n}: ${Math.round(times.at(-1)!)} ms, ${Math.round(pdf.length / 1024)} KB`,
          );
        }
        rows.push(
          error && times.length === 0
            ? {
                engine: 'service',
                template,
                tagged,
                p50Ms: Number.NaN,
                kb: 0,
                pages: 0,
                peakRssMb: mem.read().peakRssMB,
                processPeakRssMb: own.readMb(),
                mainBuffersPeakMb: mainBuffers.readMb(),
                n,
                error,
              }
            : {
                engine: 'service',
                template,
                tagged,
                p50Ms: Math.round(p50(times)),
                kb: Math.round(pdf.length / 1024),
                pages: pagesOf(pdf),
                peakRssMb: mem.read().peakRssMB,
                processPeakRssMb: own.readMb(),
                mainBuffersPeakMb: mainBuffers.readMb(),
                n: times.length,
                error,
              },
        );
      }
  } finally {
    own.stop();
    mainBuffers.stop();
    await mem.stop();
  }
  return rows;
}

/**
 * The service's settings for the long report: its defaults (the renderer memory bound sized to the
 * machine, src/config/settings.ts `defaultRendererMemoryMb`; the template evaluation limit), unless
 * PRESSROOM_RENDERER_MEMORY_MB or PRESSROOM_TEMPLATE_TIMEOUT_MS in the environment replace them (the
 * one-table version needs a bound of ~10 GB).
 */
export const LONG_SERVICE_ENV: Record<string, string> = { PRESSROOM_JOB_POLL_MS: '100' };

export function longTable(rows: LongRow[]): string {
  const floor = (template: LongTemplate, tagged: boolean) =>
    rows.find((r) => r.engine === 'floor' && r.template === template && r.tagged === tagged);
  const lines = [
    `| 330-page report, c=1 | ledger | tagged | n | p50 ms | p50 ×floor | KB | pages | peak RSS MB | of which the service's Node process | its event loop's Buffers MB | failure |`,
    '|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const r of rows) {
    const f = floor(r.template, r.tagged);
    lines.push(
      `| ${r.engine} | ${r.template === 'split' ? `tables of ${SPLIT_ROWS}` : 'one table'} | ${r.tagged ? 'yes' : 'no'} | ${r.n} | ${r.p50Ms} | ${f ? (r.p50Ms / f.p50Ms).toFixed(2) : ''} | ${r.kb} | ${r.pages} | ${r.peakRssMb ?? ''} | ${r.processPeakRssMb ?? ''} | ${r.mainBuffersPeakMb ?? ''} | ${r.error ?? ''} |`,
    );
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { startBenchService, createBenchAccount, preparePeers } = await import('../bench-service.js');
  const args = process.argv.slice(2);
  const templates = longTemplatesOption(args);
  const nIndex = args.indexOf('--n');
  const n = nIndex >= 0 ? Number(args[nIndex + 1]) : 3;
  // `--floor off`: the service alone (an A/B of its settings; the floor's figures do not change with them).
  const floorAt = args.indexOf('--floor');
  const withFloor = floorAt < 0 || args[floorAt + 1] !== 'off';
  preparePeers();
  const rows = withFloor ? await measureFloor(n, templates) : [];
  const service = await startBenchService(LONG_SERVICE_ENV);
  try {
    const { apiKey } = await createBenchAccount(service.baseUrl);
    rows.push(...(await measureService(service.baseUrl, apiKey, n, templates, service.child.pid!)));
  } finally {
    await service.stop();
  }
  process.stdout.write(`${longTable(rows)}\n`);
}
