/**
 * A real worker process: `node --import tsx src/main.ts serve --role worker` against the same database
 * as a test app (the same SQLite file, or the same PostgreSQL schema through `search_path` in the URL),
 * with the same secret key and public URL, so its results are the app's. `crash()` SIGKILLs the Node
 * process alone (what a lease must survive); `stop()` also ends the Chromium processes it had started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SECRET_KEY, type TestApp } from './test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every live descendant of `pid` (Chromium and its helpers), read from /proc. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited while we looked
    }
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const next = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

/** A spawned worker process. */
export interface WorkerProcess {
  pid: number;
  /** Parsed JSON log lines so far. */
  logs: Record<string, any>[];
  /** Resolves with the first log line matching `predicate`. */
  waitForLog(predicate: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  /** Resolves with the exit code or signal. */
  exited: Promise<number | string | null>;
  /** SIGKILL the Node process alone: a crash, leaving its jobs' leases to run out. */
  crash(): void;
  /** SIGTERM and wait; then kill whatever is left of its process group. */
  stop(): Promise<void>;
}

/** Spawns `serve --role worker` on the test app's database; `env` overrides its configuration. */
export function spawnWorker(t: TestApp, env: Record<string, string> = {}): WorkerProcess {
  const databaseEnv = { ...t.database.env };
  if (t.database.pgSchema) {
    const url = new URL(databaseEnv.PRESSROOM_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${t.database.pgSchema}`);
    databaseEnv.PRESSROOM_DATABASE_URL = url.toString();
  }
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--role', 'worker'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PRESSROOM_SECRET_KEY: SECRET_KEY,
      PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'true',
      PRESSROOM_PUBLIC_URL: t.baseUrl,
      PRESSROOM_LOG_LEVEL: 'info',
      PORT: '0',
      ...databaseEnv,
      ...env,
    },
  });
  const logs: Record<string, any>[] = [];
  const listeners = new Set<() => void>();
  let buffer = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
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
      for (const l of listeners) l();
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const pid = child.pid!;
  // Chromium runs in a process group of its own (puppeteer detaches it), so a crash of the worker
  // can orphan it: remember the worker's descendants, and end exactly those afterwards.
  const started = new Set<number>();
  const killGroup = () => {
    for (const id of [pid, ...started]) {
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
    waitForLog(predicate, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = logs.find(predicate);
          if (found) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`worker ${pid}: log line not seen within ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
        void exited.then(() => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`worker ${pid} exited; stderr: ${stderr.slice(-2000)}`));
          }
        });
      });
    },
    exited,
    crash() {
      for (const id of descendants(pid)) started.add(id);
      process.kill(pid, 'SIGKILL');
    },
    async stop() {
      for (const id of descendants(pid)) started.add(id);
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
      const timer = setTimeout(killGroup, 30_000);
      await exited;
      clearTimeout(timer);
      killGroup();
    },
  };
}
