/**
 * A spawned `pressroom serve` child as tests see it: its JSON log lines, a way to wait for one, and
 * two ways to end it. Shared by the single worker of `worker-process.ts` and the multi-process
 * deployments of `cluster.ts`.
 *
 * Chromium runs in a process group of its own (puppeteer detaches it), so a crashed Node process can
 * orphan it: `crash()` and `stop()` remember the child's descendants first and end exactly those.
 */
import type { ChildProcess } from 'node:child_process';
import { descendants } from './documents/rendering-kit.js';

export interface ServedChild {
  readonly pid: number;
  /** Parsed JSON log lines so far (empty when started with `keepLogs: false`). */
  readonly logs: Record<string, any>[];
  /** Resolves with the first log line matching `predicate`; rejects if the child exits first. */
  waitForLog(predicate: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<number | string | null>;
  /** SIGKILL the Node process alone (a crash, leaving its jobs' leases to run out). */
  crash(): void;
  /** SIGKILL the whole process group and every descendant, Chromium included (a container or machine dying). */
  crashWhole(): void;
  /** SIGTERM, wait (up to 30 s, then SIGKILL), then end whatever it left behind. */
  stop(): Promise<void>;
  /** The last few kB of stderr (start-up failures). */
  stderrTail(): string;
}

/** Wraps a child spawned with `stdio: ['ignore', 'pipe', 'pipe']` and `detached: true`. */
export function superviseChild(child: ChildProcess, label: string, keepLogs = true): ServedChild {
  const pid = child.pid!;
  const logs: Record<string, any>[] = [];
  const listeners = new Set<() => void>();
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    if (!keepLogs) return;
    buffer += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ msg: line });
      }
      for (const listener of listeners) listener();
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-8000)));
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );

  const leftovers = new Set<number>();
  const killLeftovers = () => {
    for (const id of [pid, ...leftovers]) {
      try {
        process.kill(id, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };

  return {
    pid,
    logs,
    exited,
    waitForLog(predicate, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const settle = (error?: Error) => {
          listeners.delete(check);
          clearTimeout(timer);
          if (error) reject(error);
        };
        const check = () => {
          const found = logs.find(predicate);
          if (!found) return;
          settle();
          resolve(found);
        };
        const timer = setTimeout(
          () =>
            settle(
              new Error(`${label} ${pid}: log line not seen within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`),
            ),
          timeoutMs,
        );
        listeners.add(check);
        check();
        void exited.then(() => {
          if (listeners.has(check)) settle(new Error(`${label} ${pid} exited; stderr: ${stderr.slice(-2000)}`));
        });
      });
    },
    crash() {
      for (const id of descendants(pid)) leftovers.add(id);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
    crashWhole() {
      const all = descendants(pid);
      for (const target of [-pid, pid, ...all]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
    async stop() {
      for (const id of descendants(pid)) leftovers.add(id);
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const timer = setTimeout(killLeftovers, 30_000);
      await exited;
      clearTimeout(timer);
      killLeftovers();
    },
    stderrTail: () => stderr,
  };
}
