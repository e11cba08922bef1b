/** The built service for benches: started on a fresh data directory, with an account and the peers' fixtures as templates. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PEERS } from './peer-chromium.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SHARED_PEERS = resolve(ROOT, '..', 'shared', 'peers');
const ADMIN_TOKEN = 'bench-admin-token-0123456789';

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

export function preparePeers(): void {
  if (!existsSync(SHARED_PEERS)) throw new Error(`the peer harness is not at ${SHARED_PEERS}`);
  mkdirSync(PEERS, { recursive: true });
  // Copy the harness (not its outputs or modules) so its npm install has somewhere writable.
  cpSync(SHARED_PEERS, PEERS, {
    recursive: true,
    filter: (src) => !/\/(node_modules|out)(\/|$)/.test(src.slice(SHARED_PEERS.length)),
  });
  if (!existsSync(join(PEERS, 'node_modules', 'jsreport'))) {
    log('installing the peer harness packages (puppeteer-core, jsreport, nunjucks)');
    const result = spawnSync('bash', ['setup.sh'], {
      cwd: PEERS,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, SKIP_APT: '1' },
    });
    if (result.status !== 0) throw new Error('peer harness setup failed');
  }
}

/**
 * Makes sure a system engine of the harness (wkhtmltopdf) is installed: preparePeers installs only the npm
 * part, so on a fresh machine the harness's own set-up runs once more with its apt part (idempotent: it
 * installs what is missing), and the suite stops with the command to run if that cannot be done.
 */
export function ensureSystemEngine(command: string): void {
  const present = () => spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
  if (present()) return;
  log(`${command} is missing: running the peer harness set-up with its apt part (bash setup.sh)`);
  spawnSync('bash', ['setup.sh'], { cwd: PEERS, stdio: ['ignore', 'inherit', 'inherit'] });
  if (!present())
    throw new Error(
      `${command} is not installed and the peer set-up could not install it: run apt-get install ${command} as root`,
    );
}

async function waitForHealth(baseUrl: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the service did not become ready');
}

async function api(
  baseUrl: string,
  path: string,
  init: { method?: string; token?: string; apiKey?: string; body?: unknown },
): Promise<any> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.apiKey) headers['x-api-key'] = init.apiKey;
  const res = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? 'POST',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${text}`);
  return JSON.parse(text);
}

export async function startBenchService(
  env: Record<string, string> = {},
): Promise<{ baseUrl: string; child: ChildProcess; dataDir: string; stop(): Promise<void> }> {
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) throw new Error('build first: npm run build');
  // A stale build measures code that is no longer in src/ (a run here once measured the previous renderer).
  const built = statSync(join(ROOT, 'dist', 'main.js')).mtimeMs;
  const newer = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).find(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && statSync(join(ROOT, 'src', f)).mtimeMs > built,
  );
  if (newer) throw new Error(`src/${newer} is newer than the build: npm run build first`);
  const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-bench-'));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
      join(ROOT, 'bin', 'pressroom.js'),
      'serve',
    ],
    {
      env: {
        ...process.env,
        PORT: String(port),
        PRESSROOM_HOST: '127.0.0.1',
        PRESSROOM_DATA_DIR: dataDir,
        PRESSROOM_ADMIN_TOKEN: ADMIN_TOKEN,
        PRESSROOM_LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(baseUrl, child);
  return {
    baseUrl,
    child,
    dataDir,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function createBenchAccount(baseUrl: string): Promise<{
  apiKey: string;
  invoiceId: string;
  reportId: string;
  invoiceUntaggedId: string;
  reportUntaggedId: string;
}> {
  const account = await api(baseUrl, '/v1/admin/accounts', {
    token: ADMIN_TOKEN,
    body: { credits: 1_000_000, plan: 'enterprise' },
  });
  const fixture = (name: string) => readFileSync(join(SHARED_PEERS, 'fixtures', name), 'utf8');
  const template = async (name: string, file: string, page?: Record<string, unknown>) =>
    (
      await api(baseUrl, '/v1/templates', {
        apiKey: account.api_key,
        body: { name, html: fixture(file), ...(page ? { page } : {}) },
      })
    ).id as string;
  return {
    apiKey: account.api_key,
    invoiceId: await template('Invoice (peer fixture)', 'invoice.html'),
    reportId: await template('Report (peer fixture)', 'report.html'),
    // The same templates with page.tagged: false, for the untagged pass of --suite issue17.
    invoiceUntaggedId: await template('Invoice, untagged', 'invoice.html', { tagged: false }),
    reportUntaggedId: await template('Report, untagged', 'report.html', { tagged: false }),
  };
}
