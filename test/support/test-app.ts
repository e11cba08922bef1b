/**
 * The whole service on a loopback port, on a real database, for API tests over real HTTP.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config, type DeepPartial } from '../../src/config/load-config.js';
import { ignoredVariables } from '../../src/config/ignored-variables.js';
import { buildApp } from '../../src/http/app.js';
import { createServices, type Services } from '../../src/services.js';
import { createLogger } from '../../src/shared/log.js';
import { createTestDatabase, type TestDatabase, type TestDialect } from './databases.js';

import { until } from './until.js';

export { until };

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const SECRET_KEY = 'test-secret-key-0123456789abcdef0123456789abcdef';

export interface TestApp {
  dialect: TestDialect;
  baseUrl: string;
  config: Config;
  services: Services;
  app: FastifyInstance;
  database: TestDatabase;
  /** Every log line written (JSON text), when started with `captureLogs`. */
  logs: string[];
  /** fetch against the app with JSON helpers. */
  request(
    method: string,
    path: string,
    options?: { apiKey?: string; bearer?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string },
  ): Promise<TestResponse>;
  createAccount(input?: {
    credits?: number;
    plan?: string;
    email?: string;
    rate_limit?: { per_minute?: number; per_day?: number };
  }): Promise<{ accountId: string; apiKey: string }>;
  close(): Promise<void>;
}

/** Saves each template (`POST /v1/templates`) in order and returns their ids by key; throws with the answer of one refused. */
export async function createTemplates<K extends string>(
  t: TestApp,
  apiKey: string,
  templates: Record<K, Record<string, unknown>>,
): Promise<Record<K, string>> {
  const ids = {} as Record<K, string>;
  for (const [key, body] of Object.entries(templates) as [K, Record<string, unknown>][]) {
    const res = await t.request('POST', '/v1/templates', { apiKey, body });
    if (res.status !== 201) throw new Error(`template ${key}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    ids[key] = res.body.id;
  }
  return ids;
}

/**
 * Polls job `jobId` (`GET /v1/pdf/jobs/:id`) until it ends, within `timeoutMs`, and returns its PDF's
 * bytes from the signed result link; throws with the job's body when it ended otherwise than completed.
 */
export async function completedJobPdf(t: TestApp, apiKey: string, jobId: string, timeoutMs: number): Promise<Buffer> {
  const done = await until(
    async () => {
      const job = await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey });
      return job.body.status === 'completed' || job.body.status === 'failed' ? job.body : undefined;
    },
    timeoutMs,
    `job ${jobId} to finish`,
  );
  if (done.status !== 'completed') throw new Error(`job ${jobId} ended ${JSON.stringify(done)}`);
  const link = new URL(done.result_url);
  return (await t.request('GET', `${link.pathname}${link.search}`)).bytes;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  bytes: Buffer;
}

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Throws when `env` sets a `PRESSROOM_*` variable that is not a setting: the service would ignore it
 * (with a warning), and the test would not test what it says. Fixed values are tuned in code instead.
 */
export function onlySettings(env: Record<string, string>): Record<string, string> {
  const ignored = ignoredVariables(env);
  if (ignored.length > 0)
    throw new Error(
      `not settings: ${ignored.join(', ')} (docs/settings.md); tune fixed values with startTestApp's \`tuning\``,
    );
  return env;
}

export interface TestAppOptions {
  /** Log lines go to `logs` (at debug level) instead of the console. */
  captureLogs?: boolean;
  /** Values set in code over the loaded config: the fixed ones no variable sets (loadConfig's `tuning`). */
  tuning?: DeepPartial<Config>;
}

export async function startTestApp(
  dialect: TestDialect,
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  onlySettings(env);
  const database = await createTestDatabase(dialect);
  const port = await freePort();
  const config = loadConfig(
    {
      PRESSROOM_ADMIN_TOKEN: ADMIN_TOKEN,
      PRESSROOM_SECRET_KEY: SECRET_KEY,
      PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'true',
      PRESSROOM_LOG_LEVEL: process.env.PRESSROOM_TEST_LOG_LEVEL ?? 'silent',
      PRESSROOM_HOST: '127.0.0.1',
      PORT: String(port),
      PRESSROOM_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ...database.env,
      ...env,
    },
    { tuning: options.tuning },
  );
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const logger = options.captureLogs ? createLogger('debug', sink) : createLogger(config.logLevel);
  const services = await createServices(config, { logger, pgSchema: database.pgSchema });
  const app = await buildApp(services);
  await app.listen({ host: '127.0.0.1', port });
  const baseUrl = `http://127.0.0.1:${port}`;

  const request: TestApp['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.apiKey) headers['x-api-key'] = options.apiKey;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
    const bytes = Buffer.from(await response.arrayBuffer());
    const type = response.headers.get('content-type') ?? '';
    const parsed =
      type.includes('application/json') && bytes.length > 0
        ? JSON.parse(bytes.toString('utf8'))
        : bytes.toString('utf8');
    return { status: response.status, headers: response.headers, body: parsed, bytes };
  };

  return {
    dialect,
    baseUrl,
    config,
    services,
    app,
    database,
    logs,
    request,
    async createAccount(input = {}) {
      const res = await request('POST', '/v1/admin/accounts', { bearer: ADMIN_TOKEN, body: input });
      if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return { accountId: res.body.account_id, apiKey: res.body.api_key };
    },
    async close() {
      await app.close();
      await services.close();
      await database.dispose();
    },
  };
}
