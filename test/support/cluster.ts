/**
 * A Pressroom deployment made of real processes, for multi-process tests, drills and the load test:
 * N `serve --role api` and M `serve --role worker` children (or `--role all`), from the built
 * `dist/` (`ensureDist()` rebuilds it when a source is newer), sharing
 *   - PostgreSQL: a schema of its own in the test database (or one SQLite file),
 *   - Redis for rate limits (when `redisUrl` is given),
 *   - the CDN storage: the loopback, signature-verifying S3 server (or one local directory),
 * with one secret key, so any process can read what another wrote.
 *
 * Every process listens on a port of its own (workers serve /healthz, /readyz and /metrics) and is
 * started when its /readyz answers 200. `crash()` SIGKILLs a process alone (leases must survive it);
 * `stop()` sends SIGTERM and then ends whatever it left (Chromium runs in its own process group).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { TEST_PG_URL } from './global-setup.js';
import { startS3Server, type S3Server } from './s3-server.js';
import { superviseChild, type ServedChild } from './child-process.js';
import { ADMIN_TOKEN, SECRET_KEY, freePort, onlySettings } from './test-app.js';

export { freePort, until } from './test-app.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const S3_BUCKET = 'pressroom-files';
const S3_ACCESS_KEY = 'cluster-access-key-0001';
const S3_SECRET = 'cluster-secret-key-0123456789abcdef';

export type ProcessRole = 'api' | 'worker' | 'all';

/** Builds dist/ if a source file is newer than it (once, under a lock shared by parallel test files). */
export function ensureDist(): void {
  execFileSync(
    'flock',
    ['/tmp/pressroom-build.lock', process.execPath, join(ROOT, 'test', 'support', 'build-dist.mjs')],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

/** An HTTP answer with the body parsed when it is JSON. */
export interface HttpResponse {
  status: number;
  headers: Headers;
  body: any;
  bytes: Buffer;
}

export interface RequestOptions {
  apiKey?: string;
  bearer?: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** fetch with JSON helpers. */
export async function httpRequest(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path.startsWith('http') ? path : `${baseUrl}${path}`, {
    method,
    headers,
    body,
    signal: options.signal,
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  const type = response.headers.get('content-type') ?? '';
  const parsed =
    type.includes('application/json') && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : bytes.toString('utf8');
  return { status: response.status, headers: response.headers, body: parsed, bytes };
}

/** One running `pressroom serve` child. */
export interface PressroomProcess extends ServedChild {
  readonly role: ProcessRole;
  readonly port: number;
  readonly baseUrl: string;
  request(method: string, path: string, options?: RequestOptions): Promise<HttpResponse>;
}

/** What a cluster is made of. */
export interface ClusterOptions {
  apis?: number;
  workers?: number;
  /** `serve --role all` processes (the embedded default is one of these on SQLite and local files). */
  alls?: number;
  /** @defaultValue 'postgres' */
  database?: 'postgres' | 'sqlite';
  /** A PostgreSQL server of the test's own (own-postgres.ts) instead of the machine's. */
  pgUrl?: string;
  /** @defaultValue 's3' (the loopback S3 server) */
  storage?: 's3' | 'local';
  /** Shared rate-limit store; absent → each process limits in memory. */
  redisUrl?: string;
  /** Extra environment for every process. */
  env?: Record<string, string>;
  /** @defaultValue 'info' */
  logLevel?: string;
  /** Parse and keep log lines. @defaultValue true */
  keepLogs?: boolean;
}

/** A running deployment. */
export interface Cluster {
  readonly apis: PressroomProcess[];
  readonly workers: PressroomProcess[];
  readonly alls: PressroomProcess[];
  readonly s3: S3Server | undefined;
  /** The shared database, for assertions (migrations are the processes' job). */
  readonly db: DatabaseHandle['db'];
  /** Starts one more process and waits until it is ready; `env` is added to the cluster's. */
  spawn(role: ProcessRole, env?: Record<string, string>): Promise<PressroomProcess>;
  /** An account through the admin API of the first API process. */
  createAccount(input?: {
    credits?: number;
    plan?: string;
    rate_limit?: { per_minute?: number; per_day?: number };
  }): Promise<{ accountId: string; apiKey: string }>;
  /** The environment every process gets (no secrets beyond the test ones). */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

function startProcess(
  role: ProcessRole,
  env: Record<string, string>,
  port: number,
  keepLogs: boolean,
): PressroomProcess {
  const child: ChildProcess = spawn(process.execPath, ['bin/pressroom.js', 'serve', '--role', role], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, PORT: String(port) },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    ...superviseChild(child, role, keepLogs),
    role,
    port,
    baseUrl,
    request: (method, path, options) => httpRequest(baseUrl, method, path, options),
  };
}

/** Polls /readyz until 200; fails if the process exits first or `timeoutMs` passes. */
export async function waitUntilReady(proc: PressroomProcess, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  let last = '';
  while (Date.now() < end) {
    if (exited)
      throw new Error(`${proc.role} ${proc.pid} exited before it was ready: ${proc.stderrTail().slice(-2000)}`);
    try {
      const res = await httpRequest(proc.baseUrl, 'GET', '/readyz');
      if (res.status === 200) return;
      last = JSON.stringify(res.body);
    } catch (error) {
      last = String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${proc.role} ${proc.pid} not ready within ${timeoutMs} ms (last: ${last})`);
}

/** Starts the shared services and the processes; resolves when every process is ready. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  ensureDist();
  const dialect = options.database ?? 'postgres';
  const pgUrl = options.pgUrl ?? TEST_PG_URL;
  const database: TestDatabase = await createTestDatabase(dialect, pgUrl);
  const s3 =
    (options.storage ?? 's3') === 's3'
      ? await startS3Server({ accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET, buckets: [S3_BUCKET] })
      : undefined;
  const env: Record<string, string> = {
    PRESSROOM_SECRET_KEY: SECRET_KEY,
    PRESSROOM_ADMIN_TOKEN: ADMIN_TOKEN,
    PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'true',
    PRESSROOM_HOST: '127.0.0.1',
    PRESSROOM_LOG_LEVEL: options.logLevel ?? 'info',
    PRESSROOM_DATA_DIR: database.dataDir,
  };
  if (database.pgSchema) {
    const url = new URL(pgUrl);
    url.searchParams.set('options', `-c search_path=${database.pgSchema}`);
    env.PRESSROOM_DATABASE_URL = url.toString();
  }
  if (s3) {
    const query = new URLSearchParams({
      endpoint: s3.endpoint,
      access_key_id: S3_ACCESS_KEY,
      secret_access_key: S3_SECRET,
      force_path_style: 'true',
      region: s3.region,
    });
    env.PRESSROOM_STORAGE_URL = `s3://${S3_BUCKET}/generated?${query.toString()}`;
  } else {
    env.PRESSROOM_STORAGE_URL = pathToFileURL(join(database.dataDir, 'files')).href;
  }
  if (options.redisUrl) env.PRESSROOM_REDIS_URL = options.redisUrl;
  // Processes are configured by settings only: a fixed value cannot be tuned from outside.
  Object.assign(env, onlySettings(options.env ?? {}));

  const keepLogs = options.keepLogs ?? true;
  const processes: PressroomProcess[] = [];
  const cluster = {
    apis: [] as PressroomProcess[],
    workers: [] as PressroomProcess[],
    alls: [] as PressroomProcess[],
    s3,
    env,
  };
  const spawnOne = async (role: ProcessRole, extra: Record<string, string> = {}): Promise<PressroomProcess> => {
    onlySettings(extra);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const proc = startProcess(
        role,
        { PRESSROOM_PUBLIC_URL: `http://127.0.0.1:${port}`, ...env, ...extra },
        port,
        keepLogs,
      );
      processes.push(proc);
      try {
        await waitUntilReady(proc);
      } catch (error) {
        // freePort's port is free when it answers, not when the process listens: in between, another
        // process can take it (seen in CI: EADDRINUSE as a worker restarted). Then another port.
        if (attempt < 3 && /EADDRINUSE/.test(String(error))) continue;
        throw error;
      }
      ({ api: cluster.apis, worker: cluster.workers, all: cluster.alls })[role].push(proc);
      return proc;
    }
  };

  let handle: DatabaseHandle | undefined;
  const close = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await handle?.close();
    await s3?.stop();
    await database.dispose();
  };
  try {
    // The first process migrates the fresh database; the rest start together.
    const roles: ProcessRole[] = [
      ...Array<ProcessRole>(options.apis ?? 0).fill('api'),
      ...Array<ProcessRole>(options.alls ?? 0).fill('all'),
      ...Array<ProcessRole>(options.workers ?? 0).fill('worker'),
    ];
    if (roles.length > 0) await spawnOne(roles[0]!);
    await Promise.all(roles.slice(1).map((role) => spawnOne(role)));
    handle = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? pgUrl : undefined,
      sqlitePath: join(database.dataDir, 'pressroom.db'),
      pgSchema: database.pgSchema,
      migrate: false,
    });
  } catch (error) {
    await close();
    throw error;
  }
  const db = handle.db;
  return {
    ...cluster,
    db,
    spawn: spawnOne,
    async createAccount(input = {}) {
      const admin = cluster.apis[0] ?? cluster.alls[0];
      if (!admin) throw new Error('the cluster has no API process');
      const res = await admin.request('POST', '/v1/admin/accounts', { bearer: ADMIN_TOKEN, body: input });
      if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { accountId: res.body.account_id, apiKey: res.body.api_key };
    },
    close,
  };
}

/** Polls `what` every 100 ms until it returns a truthy value. */
