/**
 * Watches the memory of one browser's document processes and kills the one that goes past the bound
 * (PRESSROOM_RENDERER_MEMORY_MB). V8's heap cap covers none of what a document can make Chromium
 * allocate outside JavaScript: decoded images, rasterised filters, canvases (issue 15: one PNG took
 * a Chromium process to 3.1 GB).
 *
 * Two kinds of process hold a document's memory, and both are watched:
 *  - `renderer` (`--type=renderer`): one per page (puppeteer's flags disable sharing a process
 *    between same-site pages), holding its DOM, layout, scripts, canvases. Killing it crashes just
 *    that page: its session reports `Inspector.targetCrashed` and the render on it fails.
 *  - `print-compositor` (`--utility-sub-type=printing.mojom.PrintCompositor`): one per print, started
 *    when the page's content is handed over; it decodes the images and rasterises filters into the
 *    PDF, so a large image costs its memory here, several times what it costs the renderer (figures:
 *    docs/performance-log/2026-11-22-to-28-service.md). Killing it leaves its print waiting for ever, so the
 *    generation finds that print (`print-tracker.ts`) and stops it.
 * The browser process and its other helpers are not watched: killing them would fail every render.
 *
 * Linux only: /proc, polled every `intervalMs` while at least one render holds the watch. RSS is
 * read between polls, so a process can pass the bound by what it allocates in one interval.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Logger } from '../shared/log.js';
import { listPids, readProcStat } from './proc-stat.js';

/** A document process that went past the bound and was killed. */
export interface KilledProcess {
  pid: number;
  kind: 'renderer' | 'print-compositor';
  /** When it started, in clock ticks since boot (/proc/<pid>/stat), for `PrintTracker`. */
  startTicks: number;
  rssBytes: number;
}

export interface ProcessMemoryWatchOptions {
  /** The browser process; its descendants are watched. */
  rootPid: number;
  limitBytes: number;
  intervalMs: number;
  logger: Logger;
  onKilled(process: KilledProcess): void;
}

type Kind = KilledProcess['kind'];
/** What /proc/<pid>/cmdline said about a process, by pid and start time (a pid may be reused). */
interface Known {
  startTicks: number;
  kind: Kind | undefined;
  /**
   * A Chromium helper of a final type (`--type=` anything but `zygote`: renderers, utilities, the GPU
   * process), which starts no processes of its own; the browser and its zygotes do.
   */
  leaf: boolean;
}

export class ProcessMemoryWatch {
  #holders = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #known = new Map<number, Known>();

  constructor(private readonly options: ProcessMemoryWatchOptions) {}

  /** Polls while at least one holder holds it; call the returned function when done. */
  hold(): () => void {
    this.#holders += 1;
    this.#timer ??= setInterval(() => this.#poll(), this.options.intervalMs).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holders -= 1;
      if (this.#holders > 0) return;
      clearInterval(this.#timer);
      this.#timer = undefined;
    };
  }

  /** Stops polling for good (the browser is closing). */
  stop(): void {
    this.#holders = 0;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #poll(): void {
    try {
      readdirSync('/proc/self'); // throws where there is no /proc: the watch stops, logged below
      const seen = new Set<number>();
      // Helpers start no processes of their own, so their threads are not searched for children
      // (that was most of the work of a poll: a renderer has ~20 threads). Known from the last poll;
      // a pid reused since by a process that forks has its children found at the next poll.
      const isLeaf = (pid: number) => this.#known.get(pid)?.leaf === true;
      const root = this.options.rootPid;
      const watched = descendantsOf(root, isLeaf);
      for (const pid of watched) {
        seen.add(pid);
        const known = this.#classify(pid);
        if (!known?.kind) continue;
        const rssBytes = residentBytes(pid);
        if (rssBytes !== undefined && rssBytes > this.options.limitBytes) this.#kill(pid, known, rssBytes);
      }
      for (const pid of this.#known.keys()) if (!seen.has(pid)) this.#known.delete(pid);
    } catch (error) {
      // /proc unreadable (not Linux, or a hardened mount): the watch cannot work; say so once.
      this.options.logger.error(
        { err: error },
        'the Chromium memory watch cannot read /proc; PRESSROOM_RENDERER_MEMORY_MB is not enforced',
      );
      this.stop();
    }
  }

  #classify(pid: number): Known | undefined {
    const startTicks = startTicksOf(pid);
    if (startTicks === undefined) return undefined;
    const cached = this.#known.get(pid);
    // Only a helper's type is final: a child forked from the zygote shows the zygote's command line
    // until it has renamed itself, so the browser and zygotes are looked at again next time.
    if (cached?.startTicks === startTicks && cached.leaf) return cached;
    const args = argsOf(readText(`/proc/${pid}/cmdline`) ?? '');
    const type = args.find((arg) => arg.startsWith('--type='));
    const known: Known = { startTicks, kind: kindOf(args), leaf: type !== undefined && type !== '--type=zygote' };
    this.#known.set(pid, known);
    return known;
  }

  #kill(pid: number, known: Known, rssBytes: number): void {
    // Still the same process (not a reused pid)?
    if (startTicksOf(pid) !== known.startTicks) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return; // exited meanwhile
    }
    this.#known.delete(pid);
    const kind = known.kind!;
    this.options.logger.warn(
      {
        chromiumPid: pid,
        kind,
        rssMb: Math.round(rssBytes / 1024 / 1024),
        limitMb: Math.round(this.options.limitBytes / 1024 / 1024),
      },
      'Chromium process over the memory bound killed',
    );
    this.options.onKilled({ pid, kind, startTicks: known.startTicks, rssBytes });
  }
}

/** Clock ticks since boot now (USER_HZ is 100 on every Linux ABI), on the clock of /proc/<pid>/stat. */
export function nowTicks(): number {
  const uptime = readText('/proc/uptime');
  return uptime === undefined ? Number.NaN : Math.floor(Number(uptime.split(' ')[0]) * 100);
}

function argsOf(cmdline: string): string[] {
  // Chromium rewrites its processes' titles: the arguments come separated by spaces, not NULs.
  return cmdline.split(/[\0 ]/);
}

function kindOf(args: string[]): Kind | undefined {
  if (args.includes('--type=renderer')) return 'renderer';
  if (args.includes('--utility-sub-type=printing.mojom.PrintCompositor')) return 'print-compositor';
  return undefined;
}

/**
 * Every descendant of `root`: through /proc/<pid>/task/<tid>/children where the kernel has them
 * (CONFIG_PROC_CHILDREN), else by the parent pid of every process. Empty once `root` has exited.
 * The children of a pid `isLeaf` accepts are not looked for (it is still listed).
 */
function descendantsOf(root: number, isLeaf: (pid: number) => boolean): number[] {
  if (readText(`/proc/${root}/task/${root}/children`) === undefined) return descendantsByParent(root);
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (isLeaf(pid)) continue;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // exited meanwhile
    }
    for (const tid of tasks) {
      for (const child of (readText(`/proc/${pid}/task/${tid}/children`) ?? '').split(' ')) {
        if (child === '') continue;
        found.push(Number(child));
        queue.push(Number(child));
      }
    }
  }
  return found;
}

function descendantsByParent(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of listPids()) {
    const stat = readProcStat(entry);
    if (stat === undefined) continue;
    children.set(stat.parent, [...(children.get(stat.parent) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function startTicksOf(pid: number): number | undefined {
  const value = readProcStat(pid)?.startTicks;
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}

function residentBytes(pid: number): number | undefined {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readText(`/proc/${pid}/status`) ?? '');
  return match ? Number(match[1]) * 1024 : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
