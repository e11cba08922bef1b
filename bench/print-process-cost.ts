/**
 * Where Chromium's CPU goes when it prints one short document, by process (issue 17, README
 * "Performance"): plain puppeteer on the peers' Chromium (no Pressroom), one page reused, one document
 * at a time, as the floor prints. For each process model (Chromium's default, and each `--models`
 * flag set) and each document (by default a one-line page and the peers' invoice; `--documents` adds the 33-page report) tagged and untagged, it prints
 * `--n` documents after a warm-up and reads from /proc the CPU time (user + system) of every Chromium
 * process around them, per document:
 *   - browser, renderer, GPU: the long-lived processes' own CPU;
 *   - zygote: the zygote's own CPU (it forks every child);
 *   - exited children: processes that ended during the run, as their parent (the zygote) collected
 *     them (`cutime + cstime`): the print compositors, one started and ended per print.
 * Then it prints 10 more documents while it polls /proc every millisecond and counts the Chromium
 * processes that appear: processes started per print.
 *
 * Why: a `Page.printToPDF` in Chromium 156 sends the page's recording to a `PrintCompositor` service
 * that Chromium starts in a new utility process for each print and ends after it (non-mobile builds
 * always composite; no flag turns it off). Starting and ending that process is a fixed cost per
 * document, as large as the rest of a short document's print. `--single-process` (renderer and
 * utilities as threads of the browser) is measured to show what that costs; Pressroom does not use it
 * (one crash or memory kill would end every render of the browser, and documents with scripts need
 * browser contexts of their own, which it does not support).
 *
 * Last, it prints `--n-throughput` documents (default 3 × n) at concurrency 2 with one browser and a
 * page per worker (the floor's shape) and with one `--single-process` browser per worker, and reports
 * documents per second.
 *
 *   node --import tsx bench/print-process-cost.ts [--n 100] [--n-throughput 300] [--models ',--single-process'] [--documents one-line,invoice,report,report:100]
 *     [--throughput-only yes]
 *
 * `report:N` is the 33-page report with only its first N ledger rows (report:30 is ~1 page, report:100
 * ~3), to find the length from which a single-process browser per worker stops paying.
 *
 * `--models` is a comma-separated list of flag sets, each a space-separated list of flags; the empty
 * set is the peers' Chromium as it is.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listPids, readProcStat, type ProcStat } from '../src/rendering/chromium/proc-stat.js';
import { option } from './cli-option.js';
import { PEERS, peerChromium } from './peer-chromium.js';
import { preparePeers } from './run.js';

/** Clock ticks per second of /proc/<pid>/stat's times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
const KINDS = ['browser', 'renderer', 'gpu-process', 'zygote', 'exited children', 'other'] as const;
type Kind = (typeof KINDS)[number];

interface ChromiumProcess {
  pid: number;
  parent: number;
  kind: Kind;
  /** utime + stime, ms */
  ownMs: number;
  /** cutime + cstime: children it waited for, ms */
  childrenMs: number;
}

/** Every process under `browserPid` (itself included), with its kind from `--type=`. */
function chromiumProcesses(browserPid: number): ChromiumProcess[] {
  const all = new Map<number, ProcStat>();
  for (const pid of listPids()) {
    const stat = readProcStat(pid);
    if (stat) all.set(Number(pid), stat); // else ended between listing and reading
  }
  const under = (pid: number) => {
    for (let current: number | undefined = pid, hops = 0; current !== undefined && current > 1 && hops < 10; hops++) {
      if (current === browserPid) return true;
      current = all.get(current)?.parent;
    }
    return false;
  };
  const found: ChromiumProcess[] = [];
  for (const [pid, stat] of all) {
    if (!under(pid)) continue;
    let commandLine = '';
    try {
      commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const type = /--type=([a-z-]+)/.exec(commandLine)?.[1];
    const kind: Kind = pid === browserPid ? 'browser' : type === 'renderer' || type === 'gpu-process' || type === 'zygote' ? type : 'other';
    const ms = (ticks: number) => (ticks * 1000) / CLOCK_TICKS;
    found.push({ pid, parent: stat.parent, kind, ownMs: ms(stat.cpuTicks), childrenMs: ms(stat.childrenCpuTicks) });
  }
  return found;
}

/** CPU ms by kind spent between two readings; processes that ended count through their parent's children times. */
function spent(before: ChromiumProcess[], after: ChromiumProcess[]): Record<Kind, number> {
  const out = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<Kind, number>;
  const earlier = new Map(before.map((p) => [p.pid, p]));
  for (const p of after) {
    const was = earlier.get(p.pid);
    out[p.kind] += p.ownMs - (was?.ownMs ?? 0);
    out['exited children'] += p.childrenMs - (was?.childrenMs ?? 0);
  }
  return out;
}

/** Chromium processes that appear under `browserPid` while `work` runs, polling /proc every millisecond. */
async function processesStarted(browserPid: number, work: () => Promise<void>): Promise<number> {
  const known = new Set(chromiumProcesses(browserPid).map((p) => p.pid));
  const started = new Set<number>();
  // The browser's executable: its helpers' command lines start with it.
  const executable = readFileSync(`/proc/${browserPid}/cmdline`, 'utf8').split('\0')[0]!;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      for (const pid of listPids()) {
        if (known.has(Number(pid)) || started.has(Number(pid))) continue;
        try {
          if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(executable)) started.add(Number(pid));
        } catch {
          // gone already
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  await work();
  polling = false;
  await poll;
  return started.size;
}

async function main(): Promise<void> {
  preparePeers();
  const { puppeteer, fixtures, executablePath, args } = peerChromium();
  const n = Number(option('--n', '100'));
  const models = option('--models', ',--single-process').split(',').map((set) => set.split(' ').filter(Boolean));
  const fixtureData = (name: string) => JSON.parse(readFileSync(join(PEERS, 'fixtures', `${name}.json`), 'utf8'));
  const fixture = (name: string) => fixtures.render(`${name}.html`, fixtureData(name));
  // `report:N`: the report with only its first N ledger rows, to find where a document counts as long.
  const reportRows = (rows: number) => {
    const data = fixtureData('report');
    return fixtures.render('report.html', { ...data, rows: data.rows.slice(0, rows) });
  };
  const available: Record<string, () => string> = { 'one-line': () => '<p>One line.</p>', invoice: () => fixture('invoice'), report: () => fixture('report') };
  const documents = Object.fromEntries(
    option('--documents', 'one-line,invoice').split(',').map((name) => {
      const rows = /^report:(\d+)$/.exec(name)?.[1];
      if (rows) return [`${name} (${Math.round(reportRows(Number(rows)).length / 1024)} KB of HTML)`, reportRows(Number(rows))];
      if (!available[name]) throw new Error(`--documents: ${name} is none of ${Object.keys(available).join(', ')}, report:<rows>`);
      return [name, available[name]()];
    }),
  );
  if (option('--throughput-only', 'no') === 'yes') return throughput(Number(option('--n-throughput', String(n * 3))), documents);
  console.log(`| flags | document | tagged | ms per print | ${KINDS.join(' | ')} | all, CPU ms | processes started per print |`);
  console.log(`|---|---|---|--:|${KINDS.map(() => '--:|').join('')}--:|--:|`);
  for (const flags of models) {
    const profile = mkdtempSync(join(tmpdir(), 'bench-print-process-'));
    const browser = await puppeteer.launch({ executablePath, args: [...args, ...flags], headless: true, userDataDir: profile, protocolTimeout: 0 });
    try {
      const page = await browser.newPage();
      const pid = browser.process().pid as number;
      for (const [name, html] of Object.entries(documents)) {
        for (const tagged of [true, false]) {
          const print = async () => {
            await page.setContent(html, { waitUntil: 'load', timeout: 0 });
            await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged, timeout: 0 });
          };
          for (let i = 0; i < 5; i++) await print();
          const before = chromiumProcesses(pid);
          const t0 = performance.now();
          for (let i = 0; i < n; i++) await print();
          const ms = (performance.now() - t0) / n;
          const cost = spent(before, chromiumProcesses(pid));
          const started = await processesStarted(pid, async () => {
            for (let i = 0; i < 10; i++) await print();
          });
          const perDoc = KINDS.map((kind) => (cost[kind] / n).toFixed(1));
          const total = KINDS.reduce((sum, kind) => sum + cost[kind], 0) / n;
          console.log(`| ${flags.join(' ') || '(default)'} | ${name} | ${tagged ? 'yes' : 'no'} | ${ms.toFixed(1)} | ${perDoc.join(' | ')} | ${total.toFixed(1)} | ${(started / 10).toFixed(1)} |`);
        }
      }
    } finally {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    }
  }
  await throughput(Number(option('--n-throughput', String(n * 3))), documents);
}

/**
 * Documents per second at concurrency 2 for two ways of running Chromium: one browser with a page per
 * worker (the floor's shape, and Pressroom's), and one `--single-process` browser per worker (each
 * worker's renderer and print compositor are threads of its own browser, so the two workers still lay
 * out in parallel: a single `--single-process` browser has one renderer thread for all its pages).
 */
async function throughput(n: number, documents: Record<string, string>): Promise<void> {
  const { puppeteer, executablePath, args } = peerChromium();
  const WORKERS = 2;
  const launch = async (flags: string[]) => {
    const profile = mkdtempSync(join(tmpdir(), 'bench-print-process-'));
    const browser = await puppeteer.launch({ executablePath, args: [...args, ...flags], headless: true, userDataDir: profile, protocolTimeout: 0 });
    return { browser, close: async () => (await browser.close(), rmSync(profile, { recursive: true, force: true })) };
  };
  console.log(`\n| documents per second, concurrency ${WORKERS} | document | tagged | docs/s | × one browser |\n|---|---|---|--:|--:|`);
  for (const [name, html] of Object.entries(documents)) {
    for (const tagged of [true, false]) {
      let shared = 0;
      for (const shape of ['one browser, a page per worker', 'a --single-process browser per worker'] as const) {
        const browsers = shape.startsWith('one') ? [await launch([])] : await Promise.all(Array.from({ length: WORKERS }, () => launch(['--single-process'])));
        try {
          const pages = await Promise.all(Array.from({ length: WORKERS }, (_, i) => browsers[i % browsers.length]!.browser.newPage()));
          let left = n;
          const work = async (page: (typeof pages)[number], count: number) => {
            for (let i = 0; i < count; i++) {
              await page.setContent(html, { waitUntil: 'load', timeout: 0 });
              await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged, timeout: 0 });
            }
          };
          await Promise.all(pages.map((page) => work(page, 3)));
          const t0 = performance.now();
          await Promise.all(
            pages.map(async (page) => {
              while (left-- > 0) await work(page, 1);
            }),
          );
          const rate = n / ((performance.now() - t0) / 1000);
          if (shape.startsWith('one')) shared = rate;
          console.log(`| ${shape} | ${name} | ${tagged ? 'yes' : 'no'} | ${rate.toFixed(2)} | ${(rate / shared).toFixed(2)} |`);
        } finally {
          await Promise.all(browsers.map((b) => b.close()));
        }
      }
    }
  }
}

await main();
