/**
 * What finishing costs on create (issue 39): the invoice fixture (`../shared/peers/fixtures/invoice.
 * {html,json}`) with `watermark` + `protect` (+ `metadata`) against the same invoice without finishing,
 * on one in-process service (SQLite) over loopback HTTP, one request at a time, alternating plain and
 * finished so that load on the machine falls on both alike. Prints wall p50/p95 per kind, the ratio of
 * the p50s and of the totals (goal: at most 1.2×, signing included once it lands), and the sizes.
 *
 * `--pdf-ua` compares the invoice with `pdf_ua: true` (issue 53; goal at most 1.3×) against the same
 * invoice tagged (the default) instead: `npm run bench -- --suite pdf-ua`.
 *
 * `--text` sets the watermark's text: one in a script that needs shaping (`--text 'سري للغاية'`) is laid
 * out by Chromium on its first use (printed apart) and kept for the rest.
 *
 *   node --import tsx bench/costs/finishing-cost.ts [--n 20] [--text CONFIDENTIAL] [--fixtures ../shared/peers/fixtures]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config/load-config.js';
import { buildApp } from '../../src/http/app.js';
import { createServices } from '../../src/services.js';
import { createLogger } from '../../src/shared/log.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '20' },
    'pdf-ua': { type: 'boolean', default: false },
    text: { type: 'string', default: 'CONFIDENTIAL' },
    fixtures: { type: 'string', default: resolve(ROOT, '..', 'shared', 'peers', 'fixtures') },
  },
});
const FIXTURES = args.fixtures;
const N = Number(args.n);
const WARMUP = 2;

const FINISHING = {
  watermark: { text: args.text, opacity: 0.2, font_size: 60 },
  metadata: { title: 'Invoice', author: 'Bench GmbH' },
  protect: { owner_password: 'bench-owner-password', permissions: { printing: 'high' } },
};

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-finishing-bench-'));
const config = loadConfig({
  PRESSROOM_DATA_DIR: dataDir,
  PRESSROOM_ADMIN_TOKEN: ADMIN_TOKEN,
  PRESSROOM_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
  PRESSROOM_LOG_LEVEL: 'warn',
  PRESSROOM_HOST: '127.0.0.1',
  PORT: '0',
});
const services = await createServices(config, { logger: createLogger(config.logLevel) });
const app = await buildApp(services);
try {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const call = async (path: string, body: unknown, auth: Record<string, string>) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify(body),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (!res.ok) throw new Error(`${path} → ${res.status} ${bytes.toString('utf8').slice(0, 300)}`);
    return bytes;
  };
  await services.renderer.warmUp();
  const account = JSON.parse(
    (
      await call(
        '/v1/admin/accounts',
        { credits: 4 * N + 20, plan: 'enterprise' },
        { authorization: `Bearer ${ADMIN_TOKEN}` },
      )
    ).toString(),
  );
  const auth = { 'x-api-key': account.api_key as string };
  const template = JSON.parse(
    (
      await call('/v1/templates', { name: 'Invoice', html: readFileSync(join(FIXTURES, 'invoice.html'), 'utf8') }, auth)
    ).toString(),
  );
  const plain = {
    template_id: template.id,
    data: JSON.parse(readFileSync(join(FIXTURES, 'invoice.json'), 'utf8')),
    export_type: 'binary',
  };
  // The full finishing, and without protect (whose qpdf run is the larger part), to see the split.
  const bodies = {
    plain,
    marked: { ...plain, watermark: FINISHING.watermark, metadata: FINISHING.metadata },
    finished: { ...plain, ...FINISHING },
    ua: { ...plain, pdf_ua: true },
  };
  const kinds = args['pdf-ua'] ? (['plain', 'ua'] as const) : (['plain', 'marked', 'finished'] as const);
  const labels = {
    plain: args['pdf-ua'] ? 'tagged' : 'no finishing',
    marked: 'watermark + metadata',
    finished: 'watermark + metadata + protect',
    ua: 'pdf_ua (made PDF/UA and checked)',
  };
  const times = { plain: [] as number[], marked: [] as number[], finished: [] as number[], ua: [] as number[] };
  const sizes = { plain: 0, marked: 0, finished: 0, ua: 0 };
  // The first mark of a text is made once (for a shaped script, one Chromium layout); then kept.
  for (const text of args['pdf-ua'] ? [] : [`${args.text} 1`, `${args.text} 2`]) {
    const started = performance.now();
    await call('/v1/pdf/create', { ...bodies.marked, watermark: { ...FINISHING.watermark, text } }, auth);
    console.log(`a first request with the watermark "${text}": ${(performance.now() - started).toFixed(0)} ms`);
  }
  for (let i = 0; i < WARMUP + N; i++) {
    // Rotate which goes first, so none always follows another.
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(i + k) % kinds.length]!;
      const started = performance.now();
      const pdf = await call('/v1/pdf/create', bodies[kind], auth);
      if (i >= WARMUP) times[kind].push(performance.now() - started);
      sizes[kind] = pdf.length;
    }
  }
  const total = (values: number[]) => values.reduce((a, b) => a + b, 0);
  console.log(
    `\nFinishing cost, invoice fixture, n=${N} each, interleaved, one at a time (load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  );
  console.log('| kind | p50 ms | p95 ms | bytes | p50 ratio | total ratio |');
  console.log('|---|--:|--:|--:|--:|--:|');
  for (const kind of kinds) {
    const ratio = (f: (v: number[]) => number) => (f(times[kind]) / f(times.plain)).toFixed(2);
    console.log(
      `| ${labels[kind]} | ${percentile(times[kind], 50).toFixed(0)} | ${percentile(times[kind], 95).toFixed(0)} | ${sizes[kind]} | ${ratio((v) => percentile(v, 50))}× | ${ratio(total)}× |`,
    );
  }
  console.log(
    args['pdf-ua']
      ? '\n(goal: pdf_ua at most 1.3× the same invoice tagged)'
      : '\n(goal: the full finishing, signing included once it lands, at most 1.2× no finishing)',
  );
} finally {
  await app.close();
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
}
