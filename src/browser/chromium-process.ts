/**
 * The Chromium process itself: spawned in a process group of its own with the DevTools pipe on
 * fds 3 (to the browser) and 4 (from it), ended with the whole group. We spawn it ourselves rather
 * than through `puppeteer.launch` so that the pipe is read by our own bounded transport
 * (`devtools-pipe.ts`); puppeteer then connects over that transport.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { isDead, listPids, readProcStat } from './proc-stat.js';

/** How much of Chromium's stderr is kept, for the message of a failed start. */
const STDERR_TAIL_CHARS = 4096;
/**
 * How long kill() waits for the group's processes to be gone. A SIGKILLed renderer with gigabytes
 * mapped takes a moment to die; seen still running just after the browser's exit on a loaded machine.
 */
const GROUP_GONE_MS = 5_000;
const GROUP_POLL_MS = 20;

/** A running (or exited) Chromium. */
export interface ChromiumProcess {
  readonly pid: number | undefined;
  readonly toBrowser: Writable;
  readonly fromBrowser: Readable;
  /** Settles when the process has exited, with a sentence saying how. */
  readonly exited: Promise<string>;
  readonly hasExited: boolean;
  /** The last few kB Chromium wrote to stderr. */
  stderrTail(): string;
  /**
   * SIGKILLs the whole process group (browser, zygotes, renderers, utilities), also after the
   * browser itself has exited: its children may outlive it for a moment. Settles once no process of
   * the group is left running, or after `GROUP_GONE_MS`. Never rejects.
   */
  kill(): Promise<void>;
}

/** Spawns `executablePath args…` with the DevTools pipe. */
export function spawnChromium(executablePath: string, args: string[]): ChromiumProcess {
  const child: ChildProcess = spawn(executablePath, args, {
    // Its own process group: a Ctrl-C in a terminal reaches Node, which ends Chromium in order, and
    // the group can be killed as one.
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  // Read it always: a full stderr pipe would block Chromium.
  child.stderr?.on('data', (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL_CHARS);
  });
  let hasExited = false;
  const killGroup = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is gone (every member has exited).
    }
  };
  // Should Node itself exit (a crash, process.exit), take the browser along.
  process.once('exit', killGroup);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => {
      hasExited = true;
      process.off('exit', killGroup);
      resolve(`could not be run (${error.message})`);
    });
    child.once('exit', (code, signal) => {
      hasExited = true;
      process.off('exit', killGroup);
      resolve(signal ? `exited on ${signal}` : `exited with code ${code}`);
    });
  });
  const stdio = child.stdio as unknown as [unknown, unknown, unknown, Writable, Readable];
  return {
    pid: child.pid,
    toBrowser: stdio[3],
    fromBrowser: stdio[4],
    exited,
    get hasExited() {
      return hasExited;
    },
    stderrTail: () => stderr,
    kill: async () => {
      if (child.pid === undefined) return;
      const members = groupMembers(child.pid);
      killGroup();
      await allDead(members, GROUP_GONE_MS);
    },
  };
}

/** The processes of group `pgid` now, with their start times (a pid may be reused once one dies). */
function groupMembers(pgid: number): { pid: string; startTicks: number }[] {
  return listPids().flatMap((pid) => {
    const stat = readProcStat(pid);
    return stat && stat.processGroup === pgid && !isDead(stat) ? [{ pid, startTicks: stat.startTicks }] : [];
  });
}

/** Resolves once each of `members` is dead (a zombie or gone), or after `withinMs`. */
async function allDead(members: { pid: string; startTicks: number }[], withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs;
  const running = () =>
    members.some(({ pid, startTicks }) => {
      const stat = readProcStat(pid);
      return !isDead(stat) && stat!.startTicks === startTicks;
    });
  while (performance.now() < deadline && running()) await delay(GROUP_POLL_MS);
}
