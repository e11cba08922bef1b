/**
 * A built Pressroom checkout (this one, or an older one given with `--app`) served on loopback for the
 * before/after benches: started on a fresh data directory, ready once /readyz answers, stopped with its
 * data. One home for what layer-stall, pool-fairness and json-body-latency each did alike.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** How long a build may take to become ready (a cold Chromium on a loaded machine). */
const READY_TIMEOUT_MS = 180_000;

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

export interface AppServerOptions {
  /** The checkout whose `bin/pressroom.js` (and so dist/) runs. */
  app: string;
  port: number;
  dataDir: string;
  /** Settings on top of the loopback defaults. */
  env?: Record<string, string>;
  nodeArgs?: string[];
  /** Where the service's stdout goes. @defaultValue ignored */
  stdout?: 'ignore' | number;
}

/** `pressroom serve` of `app`, once ready. */
export async function startAppServer(options: AppServerOptions): Promise<ChildProcess> {
  const { app, port, dataDir } = options;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), join(app, 'bin', 'pressroom.js'), 'serve'], {
    cwd: app,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      PRESSROOM_HOST: '127.0.0.1',
      PRESSROOM_DATA_DIR: dataDir,
      PRESSROOM_ADMIN_TOKEN: ADMIN_TOKEN,
      PRESSROOM_LOG_LEVEL: 'warn',
      ...options.env,
    },
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit'],
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`serve exited with ${child.exitCode}`);
    if (
      await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return child;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`serve did not become ready within ${READY_TIMEOUT_MS / 1000} s`);
}

/** Stops the server and removes its data directory. */
export async function stopAppServer(child: ChildProcess, dataDir: string): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}

/** `--env NAME=value` options as an environment. */
export function envPairs(pairs: readonly string[]): Record<string, string> {
  return Object.fromEntries(pairs.map((pair) => pair.split('=', 2) as [string, string]));
}
