/**
 * A real worker process: `node bin/pressroom.js serve --role worker` (the built dist/) against the same database
 * as a test app (the same SQLite file, or the same PostgreSQL schema through `search_path` in the URL),
 * with the same secret key and public URL, so its results are the app's. `crash()` SIGKILLs the Node
 * process alone (what a lease must survive); `stop()` also ends the Chromium processes it had started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { ensureDist, ROOT } from './cluster.js';
import { superviseChild, type ServedChild } from './child-process.js';
import { onlySettings, SECRET_KEY, type TestApp } from './test-app.js';

/** A spawned worker process. */
export type WorkerProcess = ServedChild;

/** Spawns `serve --role worker` on the test app's database; `env` overrides its configuration. */
export function spawnWorker(t: TestApp, env: Record<string, string> = {}): WorkerProcess {
  const databaseEnv = { ...t.database.env };
  if (t.database.pgSchema) {
    const url = new URL(databaseEnv.PRESSROOM_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${t.database.pgSchema}`);
    databaseEnv.PRESSROOM_DATABASE_URL = url.toString();
  }
  ensureDist();
  const child: ChildProcess = spawn(process.execPath, ['bin/pressroom.js', 'serve', '--role', 'worker'], {
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
      ...onlySettings(env),
    },
  });
  return superviseChild(child, 'worker');
}
