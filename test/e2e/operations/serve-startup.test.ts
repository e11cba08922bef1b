/**
 * `pressroom serve` checks its browser before it takes work: with PRESSROOM_CHROMIUM_PATH naming a
 * missing file, a file that cannot be run, or a program that is not Chromium, the real CLI exits
 * non-zero and says which variable is wrong and how to fix it (it used to start anyway, stay
 * "starting" on /readyz forever and answer 500 to every generation). Every role renders, so every
 * role is checked; one case per role keeps it cheap.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist, ROOT } from '../../support/cluster.js';
import { superviseChild, type ServedChild } from '../../support/child-process.js';
import { SECRET_KEY } from '../../support/test-app.js';

beforeAll(() => ensureDist());
/** Start-up includes compiling the TypeScript sources through tsx on a busy machine. */
const EXIT_DEADLINE_MS = 90_000;

const dataDirs: string[] = [];
afterAll(() => {
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

function serve(role: 'all' | 'api' | 'worker', env: Record<string, string>): ServedChild {
  const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-startup-'));
  dataDirs.push(dataDir);
  const child = spawn(process.execPath, ['bin/pressroom.js', 'serve', '--role', role], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PRESSROOM_DATA_DIR: dataDir,
      PRESSROOM_SECRET_KEY: SECRET_KEY,
      PRESSROOM_LOG_LEVEL: 'info',
      PORT: '0',
      PRESSROOM_HOST: '127.0.0.1',
      ...env,
    },
  });
  return superviseChild(child, `serve --role ${role}`);
}

/** Waits for the exit (or gives up after the deadline and ends the child), then reads what it said. */
async function exitOf(child: ServedChild): Promise<{
  code: number | string | null;
  stderr: string;
  logs: Record<string, any>[];
  fatal: Record<string, any> | undefined;
  started: boolean;
}> {
  const deadline = new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), EXIT_DEADLINE_MS).unref());
  const outcome = await Promise.race([child.exited, deadline]);
  if (outcome === 'running') await child.stop();
  return {
    code: outcome,
    stderr: child.stderrTail(),
    logs: child.logs,
    fatal: child.logs.find((l) => l.level === 60),
    started: child.logs.some((l) => l.msg === 'pressroom started'),
  };
}

describe('serve stops when PRESSROOM_CHROMIUM_PATH is not a Chromium that starts', () => {
  const cases = [
    { role: 'all', path: '/nonexistent/chromium', problem: 'no such file' },
    { role: 'api', path: '/etc/passwd', problem: 'not executable' },
    { role: 'worker', path: '/bin/true', problem: 'did not start as Chromium' },
  ] as const;

  it.each(cases)(
    '--role $role with $path: exits 1 saying "$problem", the variable and the fix',
    async ({ role, path, problem }) => {
      const { code, stderr, fatal, started } = await exitOf(serve(role, { PRESSROOM_CHROMIUM_PATH: path }));
      expect(code, `still running after ${EXIT_DEADLINE_MS} ms; stderr: ${stderr}`).toBe(1);
      const expected = `PRESSROOM_CHROMIUM_PATH=${path}: ${problem}`;
      expect(stderr).toContain(`pressroom: ${expected}`);
      expect(stderr).toContain(
        "install Debian's chromium (apt-get install chromium) or set PRESSROOM_CHROMIUM_PATH to the browser's path",
      );
      expect(fatal?.msg).toContain(expected);
      expect(started).toBe(false);
      expect(stderr, 'a clean message, not a crash').not.toMatch(/\n\s+at /);
    },
    EXIT_DEADLINE_MS + 60_000,
  );

  it(
    'starts and turns ready with a real Chromium, then stops on SIGTERM',
    async () => {
      const child = serve('worker', {});
      try {
        const started = await child.waitForLog((l) => l.msg === 'pressroom started', EXIT_DEADLINE_MS);
        const ready = await fetch(`http://127.0.0.1:${started.port}/readyz`);
        expect(ready.status).toBe(200);
        expect(((await ready.json()) as { checks: Record<string, string> }).checks.renderer).toBe('ok');
      } finally {
        await child.stop();
      }
      expect(await child.exited).toBe(0);
    },
    EXIT_DEADLINE_MS + 60_000,
  );
});

describe('variables that are not settings are named, never silently ignored', () => {
  const notSettings = {
    PRESSROOM_SPOOL_DIR: '/var/spool/pressroom',
    PRESSROOM_JOB_LEASE_MS: '5000',
    PRESSROOM_RENDER_CONCURENCY: '4',
  };
  /** A former setting whose meaning carries over, one that is only reported, and a typo (issue 50 point 5). */
  const expected = [
    expect.stringMatching(
      /^PRESSROOM_JOB_LEASE_MS is a former setting: read as PRESSROOM_LEASE_MS=5000; set that instead/,
    ),
    expect.stringMatching(/^PRESSROOM_SPOOL_DIR is a former setting, ignored: now fixed, .*\(here \/.*spool\)/),
    'ignored environment variables: PRESSROOM_RENDER_CONCURENCY (not a setting). See docs/settings.md.',
  ];

  it(
    'serve logs a warning naming each, and what a former setting became',
    async () => {
      // A browser that does not start ends the run right after the warnings: nothing else is needed here.
      const { code, stderr, logs } = await exitOf(
        serve('api', { ...notSettings, PRESSROOM_CHROMIUM_PATH: '/nonexistent/chromium' }),
      );
      expect(code, stderr).toBe(1);
      expect(
        logs.filter((l) => l.level === 40).map((l) => String(l.msg)),
        stderr,
      ).toEqual(expected);
    },
    EXIT_DEADLINE_MS + 60_000,
  );

  it(
    'an admin command prints it on stderr, and does its work',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-startup-'));
      dataDirs.push(dataDir);
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
        (resolve) => {
          execFile(
            process.execPath,
            ['bin/pressroom.js', 'migrate'],
            {
              cwd: ROOT,
              timeout: EXIT_DEADLINE_MS,
              env: {
                PATH: process.env.PATH,
                HOME: process.env.HOME,
                PRESSROOM_DATA_DIR: dataDir,
                PRESSROOM_SECRET_KEY: SECRET_KEY,
                ...notSettings,
              },
            },
            (error, out, err) =>
              resolve({
                code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
                stdout: out,
                stderr: err,
              }),
          );
        },
      );
      expect(code, stderr).toBe(0);
      const warnings = stderr
        .split('\n')
        .filter((line) => line.startsWith('pressroom: warning: '))
        .map((line) => line.slice('pressroom: warning: '.length));
      expect(warnings, stderr).toEqual(expected);
      expect(stdout + stderr).not.toMatch(/\n\s+at /);
    },
    EXIT_DEADLINE_MS + 30_000,
  );
});
