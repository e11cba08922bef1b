/**
 * `npm run bench:memory`: steady memory under load. Starts the built service (embedded default), renders
 * N invoices (default 2,000) through the HTTP API at concurrency 2, and every N/8 renders prints the RSS
 * of the Node process and the summed RSS of its Chromium processes (from /proc), so growth shows.
 * A browser recycle (every BROWSER_RECYCLE_AFTER renders, src/rendering/render-limits.ts) resets
 * Chromium's figure. Each row also gives the CPU the service's own
 * processes spent per document since the previous row (Node, and Chromium's processes alive at both
 * samples), and the throughput: the peer harness's CPU column is machine-wide (its client included).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BROWSER_RECYCLE_AFTER } from '../src/rendering/render-limits.js';
import { createBenchAccount, startBenchService } from './bench-service.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function rssKb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** CPU time (user + system) of one process so far, in ms; 0 once it is gone. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ = 100
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

function descendants(pid: number): number[] {
  const all: number[] = [];
  const queue = [pid];
  while (queue.length) {
    for (const child of childrenOf(queue.shift()!)) {
      all.push(child);
      queue.push(child);
    }
  }
  return all;
}

async function main(): Promise<void> {
  const total = arg('n', 2000);
  const concurrency = arg('concurrency', 2);
  const service = await startBenchService();
  const pid = service.child.pid!;
  try {
    const { apiKey, invoiceId } = await createBenchAccount(service.baseUrl);
    const data = JSON.parse(
      readFileSync(join(import.meta.dirname, '..', '..', 'shared', 'peers', 'fixtures', 'invoice.json'), 'utf8'),
    );
    const body = JSON.stringify({ template_id: invoiceId, data, export_type: 'binary' });
    let done = 0;
    let failed = 0;
    const step = Math.max(1, Math.floor(total / 8));
    const rows: string[] = [
      '| renders | Node RSS MB | Node V8 heap used MB | Chromium RSS MB (sum) | Chromium processes | docs/s | Node CPU ms/doc | Chromium CPU ms/doc |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ];
    let last = { done: 0, at: performance.now(), node: cpuMs(pid), chromium: new Map<number, number>() };
    // The heap figure comes from the service's own /metrics (prom-client's default process metrics).
    const heapUsedMb = async () => {
      const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
      const bytes = Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1] ?? NaN);
      return (bytes / 1024 / 1024).toFixed(0);
    };
    const sample = async () => {
      const kids = descendants(pid);
      const chromium = kids.reduce((sum, p) => sum + rssKb(p), 0);
      const now = { done, at: performance.now(), node: cpuMs(pid), chromium: new Map(kids.map((p) => [p, cpuMs(p)])) };
      const docs = now.done - last.done;
      const perDoc = (ms: number) => (docs > 0 ? (ms / docs).toFixed(1) : '–');
      const chromiumMs = [...now.chromium].reduce(
        (sum, [p, ms]) => sum + (last.chromium.has(p) ? ms - last.chromium.get(p)! : 0),
        0,
      );
      const rate = docs > 0 ? (docs / ((now.at - last.at) / 1000)).toFixed(1) : '–';
      rows.push(
        `| ${done} | ${(rssKb(pid) / 1024).toFixed(0)} | ${await heapUsedMb()} | ${(chromium / 1024).toFixed(0)} | ${kids.length} | ${rate} | ${perDoc(now.node - last.node)} | ${perDoc(chromiumMs)} |`,
      );
      last = now;
      process.stderr.write(`[memory] ${rows.at(-1)}\n`);
    };
    await sample();
    let next = 0;
    const worker = async () => {
      while (next < total) {
        next++;
        const res = await fetch(`${service.baseUrl}/v1/pdf/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
          body,
        });
        await res.arrayBuffer();
        if (res.status !== 200) failed++;
        done++;
        if (done % step === 0) await sample();
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    console.log(
      `Memory over ${total} invoice renders at concurrency ${concurrency} (browser recycled every ${BROWSER_RECYCLE_AFTER}); failures: ${failed}\n`,
    );
    console.log(rows.join('\n'));
  } finally {
    await service.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
