/**
 * The few fields of /proc/<pid>/stat that the Chromium supervision (and the benchmarks and tests that
 * measure Chromium) read (Linux only; elsewhere nothing is found). The command name sits in
 * parentheses and may hold spaces and parentheses, so the fields are counted from the last ')':
 * proc(5) numbers state 3, parent 4, process group 5, minflt 10, utime 14, stime 15, cutime 16,
 * cstime 17, start 22.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  /** R, S, D, Z (a zombie: dead, not yet reaped), X (dead)… */
  state: string;
  parent: number;
  processGroup: number;
  /** When the process started, in clock ticks after boot: tells a pid reused by another process. */
  startTicks: number;
  /** Minor page faults so far. */
  minorFaults: number;
  /** CPU time so far, user + system, in clock ticks (`getconf CLK_TCK` per second). */
  cpuTicks: number;
  /** CPU time of the children it waited for (ended processes), in clock ticks. */
  childrenCpuTicks: number;
}

/** The stat of `pid`, or undefined when it does not exist (any more) or /proc cannot be read. */
export function readProcStat(pid: number | string): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (n: number) => fields[n - 3];
  const parsed = {
    state: field(3) ?? '',
    parent: Number(field(4)),
    processGroup: Number(field(5)),
    startTicks: Number(field(22)),
    minorFaults: Number(field(10)),
    cpuTicks: Number(field(14)) + Number(field(15)),
    childrenCpuTicks: Number(field(16)) + Number(field(17)),
  };
  return Number.isFinite(parsed.parent) ? parsed : undefined;
}

/** Every pid /proc lists now (empty where there is no /proc). */
export function listPids(): string[] {
  try {
    return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return [];
  }
}

/** Dead already: a zombie waiting to be reaped, or gone. */
export const isDead = (stat: ProcStat | undefined) => stat === undefined || stat.state === 'Z' || stat.state === 'X';
