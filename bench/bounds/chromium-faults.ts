/**
 * Where the renderer's CPU goes on the 33-page report, in page faults (issue 17, README "Performance"):
 * plain puppeteer on the peers' Chromium (no Pressroom), one document at a time. For each set of extra
 * Chromium flags it prints the report `--n` times tagged and untagged after one warm-up print, and
 * reads from /proc the renderer processes' minor page faults and CPU time (user + system) around each
 * print. It also measures what one minor fault costs on this machine: Node touches one byte in each
 * 4 KB page of fresh 256 MB buffers and divides the time by the faults the kernel counted.
 *
 * Why: on a machine of this kind where Chromium was ~4× slower per document than on another, a fault
 * cost 11 µs and the report's renderer took ~95,000 of them per untagged print, a third of its CPU;
 * wkhtmltopdf's whole run took 31,000. The flag sets show which Chromium settings move that number.
 * `--disable-features=PartitionAllocBackupRefPtr` is measured, not adopted: it turns off a
 * use-after-free mitigation.
 *
 *   node --import tsx bench/bounds/chromium-faults.ts [--n 5] [--flags ',--disable-features=PartitionAllocBackupRefPtr']
 *
 * `--flags` is a comma-separated list of flag sets, each a space-separated list of flags; the empty
 * set is the peers' Chromium as it is.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readProcStat } from '../../src/browser/proc-stat.js';
import { option } from '../cli-option.js';
import { PEERS, peerChromium } from '../peer-chromium.js';
import { preparePeers } from '../bench-service.js';

const PAGE_BYTES = 4096;
/** Clock ticks per second of /proc/<pid>/stat's utime and stime. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

interface ProcessCost {
  minorFaults: number;
  cpuMs: number;
}

/** The summed minor faults and CPU of Chromium `browserPid`'s renderer processes (children or a zygote's). */
function rendererCost(browserPid: number): ProcessCost {
  const total = { minorFaults: 0, cpuMs: 0 };
  const pids = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes('--type=renderer'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
  for (const pid of pids) {
    const stat = readProcStat(pid);
    // Gone between listing and reading, or another browser's.
    if (!stat || !isDescendant(pid, browserPid)) continue;
    total.minorFaults += stat.minorFaults;
    total.cpuMs += (stat.cpuTicks * 1000) / CLOCK_TICKS;
  }
  return total;
}

function isDescendant(pid: number, ancestor: number): boolean {
  for (let current: number | undefined = pid, hops = 0; current !== undefined && current > 1 && hops < 8; hops++) {
    if (current === ancestor) return true;
    current = readProcStat(current)?.parent;
  }
  return false;
}

/** Microseconds per minor fault: touch one byte per page of fresh buffers, as the kernel counts them. */
function faultCostMicros(): { micros: number; faults: number } {
  const before = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  for (let round = 0; round < 4; round++) {
    const buffer = Buffer.allocUnsafeSlow(256 * 1024 * 1024);
    for (let offset = 0; offset < buffer.length; offset += PAGE_BYTES) buffer[offset] = 1;
  }
  const ms = performance.now() - t0;
  const faults = process.resourceUsage().minorPageFault - before;
  return { micros: (ms * 1000) / Math.max(1, faults), faults };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  preparePeers();
  const { puppeteer, fixtures, executablePath, args } = peerChromium();
  const n = Number(option('--n', '5'));
  const flagSets = option('--flags', ',--disable-features=PartitionAllocBackupRefPtr')
    .split(',')
    .map((set) => set.split(' ').filter(Boolean));
  const html = fixtures.render('report.html', JSON.parse(readFileSync(join(PEERS, 'fixtures', 'report.json'), 'utf8')));

  const cost = faultCostMicros();
  const thp = readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8').trim();
  console.log(
    `one minor fault: ${cost.micros.toFixed(2)} µs (${cost.faults} faults touching 4 × 256 MB; transparent huge pages: ${thp})\n`,
  );
  console.log(
    '| extra flags | tagged | print ms (median) | renderer CPU ms | renderer minor faults | faults × fault cost, ms |\n|---|---|--:|--:|--:|--:|',
  );
  for (const flags of flagSets) {
    const profile = mkdtempSync(join(tmpdir(), 'bench-chromium-faults-'));
    const browser = await puppeteer.launch({
      executablePath,
      args: [...args, ...flags],
      headless: true,
      userDataDir: profile,
      protocolTimeout: 0,
    });
    try {
      const page = await browser.newPage();
      const pid = browser.process().pid as number;
      for (const tagged of [true, false]) {
        const runs: { ms: number; cost: ProcessCost }[] = [];
        for (let i = 0; i <= n; i++) {
          await page.setContent(html, { waitUntil: 'load', timeout: 0 });
          const before = rendererCost(pid);
          const t0 = performance.now();
          await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged, timeout: 0 });
          const ms = performance.now() - t0;
          const after = rendererCost(pid);
          // The first print warms the renderer up; it is not counted.
          if (i > 0)
            runs.push({
              ms,
              cost: { minorFaults: after.minorFaults - before.minorFaults, cpuMs: after.cpuMs - before.cpuMs },
            });
        }
        const faults = median(runs.map((r) => r.cost.minorFaults));
        console.log(
          `| ${flags.join(' ') || '(none)'} | ${tagged ? 'yes' : 'no'} | ${Math.round(median(runs.map((r) => r.ms)))} | ${Math.round(median(runs.map((r) => r.cost.cpuMs)))} | ${faults} | ${Math.round((faults * cost.micros) / 1000)} |`,
        );
      }
    } finally {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    }
  }
}

await main();
