/**
 * `node --import tsx bench/bounds/layer-stall.ts`: does image layer work stall the server? (issue 37, case 3).
 *
 * Starts one `serve` (SQLite, a temporary data directory) from `--app` (default: this checkout's
 * dist/, so `npm run build` first; point it at another checkout's root to measure that one), creates
 * an account through the admin API and two image templates:
 *   many     `{% for i in range(--loop) %}<b data-layer="l{{ i }}" id="i{{ i }}">x</b>{% endfor %}`
 *            (400,000 layer elements once evaluated, ~16 MB of HTML);
 *   mixed    1000 layer elements, then --loop elements with an id and no layer name (within the
 *            layer bound of the current code, as large otherwise);
 *   literal  --literal layer elements written out (60,000: a ~1.7 MB template);
 *   filled   1000 layer elements written out, then 200,000 `<b>x</b>` (a ~1.6 MB template within
 *            the layer bound).
 * Then, one at a time, each heavy request below runs while `GET /healthz` is asked one call after the
 * other until the heavy one is answered; per request: its status, how long it took and its size, and
 * the /healthz waits (the longest is the stall a health check sees), and the server's own event-loop
 * delay over that time (its /metrics, reset at each scrape):
 *   plain      POST /v1/image/create of `many` without modifications (the render alone);
 *   unknown    the same with 100 modifications naming layers that do not exist;
 *   one        the same with one modification naming a real layer;
 *   bounded    POST /v1/image/create of `mixed` with 100 modifications naming layers that do not exist;
 *   layers     GET /v1/templates/{literal}/layers;
 *   listing    GET /v1/templates/{filled}/layers.
 * `--env NAME=value` (repeatable) passes settings to the server, e.g. a longer
 * `PRESSROOM_TEMPLATE_TIMEOUT_MS` on a busy machine, where evaluating the loop can take more than 5 s;
 * `--only NAME` (repeatable) runs only those requests.
 * The machine may be shared: the load average before and after is printed; read the numbers with it.
 */
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, envPairs, freePort, startAppServer, stopAppServer } from '../app-server.js';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    app: { type: 'string', default: '.' },
    loop: { type: 'string', default: '400000' },
    literal: { type: 'string', default: '60000' },
    only: { type: 'string', multiple: true, default: [] },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const APP = resolve(args.app);

function log(message: string): void {
  process.stderr.write(`[layer-stall] ${message}\n`);
}

async function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; bytes: number; text: string }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    bytes: bytes.length,
    text: res.status >= 400 || !res.headers.get('content-type')?.startsWith('image/') ? bytes.toString('utf8') : '',
  };
}

async function loopDelayMax(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_max_seconds '));
  return Number(line?.split(' ')[1]) * 1000;
}

/** Runs `heavy` while /healthz is asked one call after the other; the waits of those calls. */
async function duringHeavy(
  base: string,
  heavy: () => Promise<{ status: number; bytes: number; text: string }>,
): Promise<string> {
  await loopDelayMax(base);
  const started = performance.now();
  let settled = false;
  const running = heavy().finally(() => (settled = true));
  const waits: number[] = [];
  while (!settled) {
    const t0 = performance.now();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
    waits.push(performance.now() - t0);
  }
  const answer = await running;
  const took = performance.now() - started;
  const loop = await loopDelayMax(base);
  const sorted = [...waits].sort((a, b) => a - b);
  const max = sorted.at(-1) ?? NaN;
  const p50 = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  return (
    `${answer.status} in ${(took / 1000).toFixed(1)} s, ${(answer.bytes / 1e6).toFixed(2)} MB; /healthz n=${waits.length} p50 ${p50.toFixed(1)} ms, max ${max.toFixed(0)} ms; server loop delay max ${loop.toFixed(0)} ms` +
    (answer.status >= 400 ? `\n             ${answer.text.slice(0, 240)}` : '')
  );
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-layer-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  log(
    `app ${APP}, load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const server = await startAppServer({ app: APP, port, dataDir, env: envPairs(args.env as string[]) });
  try {
    const account = await call(
      base,
      'POST',
      '/v1/admin/accounts',
      { authorization: `Bearer ${ADMIN_TOKEN}` },
      { credits: 100, plan: 'enterprise' },
    );
    const apiKey = (JSON.parse(account.text) as { api_key: string }).api_key;
    const key = { 'x-api-key': apiKey };
    const canvas = { width: 200, height: 100 };
    const many = await call(base, 'POST', '/v1/templates', key, {
      name: 'many',
      kind: 'image',
      canvas,
      html: `{% for i in range(${args.loop}) %}<b data-layer="l{{ i }}" id="i{{ i }}">x</b>{% endfor %}`,
    });
    const mixed = await call(base, 'POST', '/v1/templates', key, {
      name: 'mixed',
      kind: 'image',
      canvas,
      html: `{% for i in range(1000) %}<b data-layer="l{{ i }}">x</b>{% endfor %}{% for i in range(${args.loop}) %}<b id="i{{ i }}">x</b>{% endfor %}`,
    });
    const mixedId = (JSON.parse(mixed.text) as { id: string }).id;
    const literalHtml = Array.from({ length: Number(args.literal) }, (_, i) => `<i data-layer="n${i}">x</i>`).join('');
    const literal = await call(base, 'POST', '/v1/templates', key, {
      name: 'literal',
      kind: 'image',
      canvas,
      html: literalHtml,
    });
    const filledHtml = `${Array.from({ length: 1000 }, (_, i) => `<i data-layer="n${i}">x</i>`).join('')}${'<b>x</b>'.repeat(200_000)}`;
    const filled = await call(base, 'POST', '/v1/templates', key, {
      name: 'filled',
      kind: 'image',
      canvas,
      html: filledHtml,
    });
    const filledId = (JSON.parse(filled.text) as { id: string }).id;
    const manyId = (JSON.parse(many.text) as { id: string }).id;
    const literalId = (JSON.parse(literal.text) as { id: string }).id;
    log(`templates: many ${manyId}, literal ${literalId} (${(literalHtml.length / 1e6).toFixed(2)} MB)`);
    // Warm-up: Chromium's first render and the first connections.
    log(
      `warm-up: ${(await call(base, 'POST', '/v1/image/create', key, { template_id: literalId, export_type: 'binary' })).status}`,
    );

    const scenarios: Record<string, () => Promise<{ status: number; bytes: number; text: string }>> = {
      plain: () => call(base, 'POST', '/v1/image/create', key, { template_id: manyId, export_type: 'binary' }),
      unknown: () =>
        call(base, 'POST', '/v1/image/create', key, {
          template_id: manyId,
          export_type: 'binary',
          modifications: Array.from({ length: 100 }, (_, i) => ({ name: `nope${i}`, text: 'y' })),
        }),
      one: () =>
        call(base, 'POST', '/v1/image/create', key, {
          template_id: manyId,
          export_type: 'binary',
          modifications: [{ name: 'l5', text: 'y' }],
        }),
      bounded: () =>
        call(base, 'POST', '/v1/image/create', key, {
          template_id: mixedId,
          export_type: 'binary',
          modifications: Array.from({ length: 100 }, (_, i) => ({ name: `nope${i}`, text: 'y' })),
        }),
      layers: () => call(base, 'GET', `/v1/templates/${literalId}/layers`, key),
      listing: () => call(base, 'GET', `/v1/templates/${filledId}/layers`, key),
    };
    const only = args.only as string[];
    for (const [name, heavy] of Object.entries(scenarios)) {
      if (only.length > 0 && !only.includes(name)) continue;
      console.log(`${name.padEnd(9)}  ${await duringHeavy(base, heavy)}`);
    }
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
