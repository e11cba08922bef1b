/**
 * `node --import tsx bench/bounds/json-body-latency.ts`: does a large JSON body stall other accounts' requests?
 * (issue 15, "Bodies that cannot stall the server").
 *
 * Starts one `serve` (SQLite, a temporary data directory) from `--app` (default: this checkout's
 * dist/, so `npm run build` first; point it at another checkout's root to measure that one), creates
 * two accounts through the admin API, and measures a victim's `GET /v1/account` one request after the
 * other, answered latency per request:
 *   quiet    for `--duration` seconds with nothing else going on;
 *   attack   for `--duration` seconds while `--attackers` loops (default 2) each post a `--mb` MB
 *            (default 9.7) JSON body to `POST /v1/pdf/create` for a template that does not exist,
 *            from an account with 0 credits (answered 404 once the body has been parsed).
 * Both accounts are on the enterprise plan, so that no rate limit cuts either loop short.
 *
 * `--shape rows` (default): invoice-like rows, `{sku, qty, price, tags}` objects; `--shape arrays`:
 * `[[],[],…]`, the slowest JSON to parse per byte.
 *
 * Out: p50/p90/p99/max of both phases, the server's event-loop delay in each (from its /metrics), the attack bodies answered and their statuses, the machine's
 * load average before and after (the machine may be shared: read the numbers with it).
 */
import { mkdtempSync, openSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, envPairs, freePort, startAppServer, stopAppServer } from '../app-server.js';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    app: { type: 'string', default: '.' },
    duration: { type: 'string', default: '30' },
    attackers: { type: 'string', default: '2' },
    mb: { type: 'string', default: '9.7' },
    shape: { type: 'string', default: 'rows' },
    env: { type: 'string', multiple: true, default: [] },
    'node-arg': { type: 'string', multiple: true, default: [] },
  },
});
const APP = resolve(args.app);
const DURATION_MS = Number(args.duration) * 1000;
const ATTACKERS = Number(args.attackers);
const BODY_BYTES = Math.round(Number(args.mb) * 1e6);

function log(message: string): void {
  process.stderr.write(`[json-body-latency] ${message}\n`);
}

/** A `POST /v1/pdf/create` body of about BODY_BYTES bytes for a template that does not exist. */
function attackBody(): Buffer {
  const head = '{"template_id":"notAtemplate","data":{"rows":[';
  const tail = ']}}';
  const item =
    args.shape === 'arrays'
      ? () => '[]'
      : (i: number) => `{"sku":"SKU-${i}","qty":${i % 7},"price":"${(i * 13) % 1000}.50","tags":["a","b"]}`;
  const parts: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; size < BODY_BYTES; i++) {
    const next = item(i);
    parts.push(next);
    size += next.length + 1;
  }
  return Buffer.from(`${head}${parts.join(',')}${tail}`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

function summary(latencies: number[]): string {
  const sorted = [...latencies].sort((a, b) => a - b);
  const f = (n: number) => `${n.toFixed(1)} ms`;
  return `n=${sorted.length} p50 ${f(percentile(sorted, 50))}  p90 ${f(percentile(sorted, 90))}  p99 ${f(percentile(sorted, 99))}  max ${f(sorted.at(-1) ?? NaN)}`;
}

async function createAccount(base: string, body: object): Promise<string> {
  const res = await fetch(`${base}/v1/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`account creation: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { api_key: string }).api_key;
}

/** The victim: GET /v1/account one after the other until `until`, each latency in ms. */
async function measure(base: string, apiKey: string, until: number): Promise<number[]> {
  const latencies: number[] = [];
  while (Date.now() < until) {
    const started = performance.now();
    const res = await fetch(`${base}/v1/account`, { headers: { 'x-api-key': apiKey } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`victim got ${res.status}`);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/**
 * The server's own event-loop delay (prom-client's monitorEventLoopDelay gauges, reset at each scrape):
 * what the loop itself was blocked for, apart from how the machine scheduled the processes.
 */
async function loopDelay(base: string): Promise<string> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (name: string) =>
    Number(
      /^(\S+) (\S+)$/m.exec(
        text.split('\n').find((l) => l.startsWith(`nodejs_eventloop_lag_${name}_seconds `)) ?? '',
      )?.[2],
    ) * 1000;
  return `p50 ${value('p50').toFixed(1)} ms  p90 ${value('p90').toFixed(1)} ms  p99 ${value('p99').toFixed(1)} ms  max ${value('max').toFixed(1)} ms`;
}

async function attack(
  base: string,
  apiKey: string,
  body: Buffer,
  until: number,
  statuses: Map<number, number>,
): Promise<void> {
  while (Date.now() < until) {
    const res = await fetch(`${base}/v1/pdf/create`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body,
    });
    await res.arrayBuffer();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-json-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  log(
    `app ${APP}, load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const server = await startAppServer({
    app: APP,
    port,
    dataDir,
    env: envPairs(args.env as string[]),
    nodeArgs: args['node-arg'] as string[],
    stdout: process.env.BENCH_SERVER_STDOUT ? openSync(process.env.BENCH_SERVER_STDOUT, 'w') : 'ignore',
  });
  try {
    const victim = await createAccount(base, { credits: 1, plan: 'enterprise' });
    const attacker = await createAccount(base, { credits: 0, plan: 'enterprise' });
    const body = attackBody();
    log(`attack body: ${(body.length / 1e6).toFixed(2)} MB, shape ${args.shape}, ${ATTACKERS} at a time`);
    // Warm-up: the first requests pay for connections, JIT and (after) the first parse thread.
    await measure(base, victim, Date.now() + 2000);
    const first = await fetch(`${base}/v1/pdf/create`, {
      method: 'POST',
      headers: { 'x-api-key': attacker, 'content-type': 'application/json' },
      body,
    });
    log(`first attack body answered ${first.status}: ${(await first.text()).slice(0, 200)}`);

    await loopDelay(base);
    const quiet = await measure(base, victim, Date.now() + DURATION_MS);
    const quietLoop = await loopDelay(base);
    const statuses = new Map<number, number>();
    const until = Date.now() + DURATION_MS;
    const attackers = Array.from({ length: ATTACKERS }, () => attack(base, attacker, body, until, statuses));
    const loaded = await measure(base, victim, until);
    await Promise.all(attackers);
    const attackLoop = await loopDelay(base);

    console.log(`app:     ${APP}`);
    console.log(`quiet:   ${summary(quiet)}`);
    console.log(`attack:  ${summary(loaded)}`);
    console.log(`server event-loop delay, quiet:  ${quietLoop}`);
    console.log(`server event-loop delay, attack: ${attackLoop}`);
    console.log(
      `bodies:  ${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')} (${(body.length / 1e6).toFixed(2)} MB each, ${args.shape})`,
    );
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await stopAppServer(server, dataDir);
  }
}

await main();
