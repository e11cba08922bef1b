/**
 * The CLI as people run it: `node bin/pressroom.js <args>` (the built dist/, as installed).
 * - The admin commands, as an operator runs them against a test app's database (the same SQLite file,
 *   or the same PostgreSQL schema through `search_path` in the URL) and secret key, so what they create
 *   and revoke is what the app sees (runCli).
 * - `generate`, as a user runs it against a service's URL (runClient, spawnClient).
 */
import { execFile, spawn } from 'node:child_process';
import { superviseChild, type ServedChild } from './child-process.js';
import { ensureDist, ROOT } from './cluster.js';
import { SECRET_KEY, type TestApp } from './test-app.js';

/** What a CLI run printed, and its exit code. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `pressroom <args>` on the test app's database; resolves when it exits (whatever the code). */
export function runCli(t: TestApp, args: string[]): Promise<CliResult> {
  const env: Record<string, string> = { ...t.database.env };
  if (t.database.pgSchema) {
    const url = new URL(env.PRESSROOM_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${t.database.pgSchema}`);
    env.PRESSROOM_DATABASE_URL = url.toString();
  }
  ensureDist();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/pressroom.js', ...args],
      {
        cwd: ROOT,
        timeout: 180_000,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, PRESSROOM_SECRET_KEY: SECRET_KEY, ...env },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Runs `pressroom <args>` as a client of a running service (`generate`): the environment holds PATH,
 * HOME and `env` only — no database, no secret key — so it can reach the service through its URL alone.
 */
export function runClient(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  ensureDist();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/pressroom.js', ...args],
      { cwd: ROOT, timeout: 180_000, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** The same as a spawned child, for a test that signals it (Ctrl-C); its stdout lines are its `logs` ({msg}). */
export function spawnClient(args: string[], env: Record<string, string> = {}): ServedChild {
  ensureDist();
  const child = spawn(process.execPath, ['bin/pressroom.js', ...args], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  return superviseChild(child, `pressroom ${args[0]}`);
}
