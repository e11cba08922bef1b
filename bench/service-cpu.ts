/**
 * Where the service's CPU goes per document, by process: starts the built service (embedded default),
 * renders `--n` peers' invoices (or, with `--fixture report`, 33-page reports) through the HTTP API at
 * `--concurrency` (2) after a warm-up (60 invoices, 4 reports), and reads
 * /proc for every process of the service's tree before and after (issue 17, README "Performance"):
 *   - node: the service's Node process, all its threads (event loop, compaction, libuv);
 *   - chromium:<type>: Chromium — its browser, renderers, GPU process, zygote;
 *   - "(ended children)": processes that ended during the run, counted by the parent that reaped them:
 *     the print compositors, one started and ended per print in a multi-process Chromium.
 * A process that started during the run counts from zero. The machine should be otherwise idle; the
 * client's own CPU (this process) is printed apart.
 *
 *   npm run build && node --import tsx bench/service-cpu.ts [--tagged on|off] [--n 400] [--concurrency 2] [--fixture invoice|report]
 *
 * CPU per document is steadier than documents per second on a machine whose speed drifts within
 * minutes, and it says which process a change saves in.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listPids, readProcStat } from '../src/browser/proc-stat.js';
import { option } from './cli-option.js';
import { createBenchAccount, SHARED_PEERS, startBenchService } from './bench-service.js';

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
/** Documents rendered before the measurement, by fixture. */
const WARM_UP = { invoice: 60, report: 4 } as const;

interface Sampled {
  parent: number;
  cpuMs: number;
  endedChildrenMs: number;
  kind: string;
}

/** Every process of the tree under `root` (itself included), with its CPU so far and its kind. */
function sampleTree(root: number): Map<number, Sampled> {
  const all = new Map<number, { parent: number; cpuMs: number; endedChildrenMs: number; command: string }>();
  for (const pid of listPids()) {
    const stat = readProcStat(pid);
    if (!stat) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    const ms = (ticks: number) => (ticks * 1000) / CLOCK_TICKS;
    all.set(Number(pid), {
      parent: stat.parent,
      cpuMs: ms(stat.cpuTicks),
      endedChildrenMs: ms(stat.childrenCpuTicks),
      command,
    });
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, p] of all) if (p.parent === tree[i]) tree.push(pid);
  const kindOf = (pid: number): string => {
    if (pid === root) return 'node';
    const type = /--type=(\S+)/.exec(all.get(pid)!.command)?.[1] ?? 'browser';
    return `chromium:${type}`;
  };
  return new Map(tree.filter((pid) => all.has(pid)).map((pid) => [pid, { ...all.get(pid)!, kind: kindOf(pid) }]));
}

async function main(): Promise<void> {
  const tagged = option('--tagged', 'off') === 'on';
  const n = Number(option('--n', '400'));
  const concurrency = Number(option('--concurrency', '2'));
  const fixture = option('--fixture', 'invoice');
  if (fixture !== 'invoice' && fixture !== 'report') throw new Error('--fixture is invoice or report');
  const service = await startBenchService({});
  const root = service.child.pid!;
  try {
    const account = await createBenchAccount(service.baseUrl);
    const { apiKey } = account;
    const templateId = {
      invoice: [account.invoiceId, account.invoiceUntaggedId],
      report: [account.reportId, account.reportUntaggedId],
    }[fixture][tagged ? 0 : 1];
    const data = JSON.parse(readFileSync(join(SHARED_PEERS, 'fixtures', `${fixture}.json`), 'utf8'));
    const body = JSON.stringify({ template_id: templateId, data, export_type: 'binary' });
    const render = async (count: number) => {
      let next = 0;
      const worker = async () => {
        while (next < count) {
          next += 1;
          const res = await fetch(`${service.baseUrl}/v1/pdf/create`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
            body,
          });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`a render answered ${res.status}`);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    };
    await render(WARM_UP[fixture]);
    const before = sampleTree(root);
    const clientBefore = process.cpuUsage();
    const startedAt = performance.now();
    await render(n);
    const seconds = (performance.now() - startedAt) / 1000;
    const client = process.cpuUsage(clientBefore);
    const after = sampleTree(root);

    const perKind = new Map<string, number>();
    const add = (kind: string, ms: number) => perKind.set(kind, (perKind.get(kind) ?? 0) + ms);
    for (const [pid, now] of after) {
      const then = before.get(pid);
      add(now.kind, now.cpuMs - (then?.cpuMs ?? 0));
      add(`${now.kind} (ended children)`, now.endedChildrenMs - (then?.endedChildrenMs ?? 0));
    }
    const total = [...perKind.values()].reduce((sum, ms) => sum + ms, 0);
    console.log(
      `\n${n} ${fixture}s, ${tagged ? 'tagged' : 'untagged'}, c = ${concurrency}: ${(n / seconds).toFixed(2)} docs/s\n`,
    );
    console.log('| process | CPU ms/doc |\n|---|--:|');
    for (const [kind, ms] of [...perKind].sort((a, b) => b[1] - a[1]))
      if (ms / n >= 0.1) console.log(`| ${kind} | ${(ms / n).toFixed(1)} |`);
    console.log(`| **the service in all** | **${(total / n).toFixed(1)}** |`);
    console.log(`| (the client, this process) | ${((client.user + client.system) / 1000 / n).toFixed(1)} |`);
  } finally {
    await service.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
