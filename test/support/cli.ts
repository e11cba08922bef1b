/**
 * The admin CLI as an operator runs it: `node bin/pressroom.js <args>` (the built dist/, as installed) against a test app's
 * database (the same SQLite file, or the same PostgreSQL schema through `search_path` in the URL) and
 * secret key, so what it creates and revokes is what the app sees.
 */
import { execFile } from 'node:child_process';
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
      { cwd: ROOT, timeout: 180_000, env: { PATH: process.env.PATH, HOME: process.env.HOME, PRESSROOM_SECRET_KEY: SECRET_KEY, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}
